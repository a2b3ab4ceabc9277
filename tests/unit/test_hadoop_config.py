"""The Hadoop test bed's configuration, as written to its conf dirs (no daemon is started)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from controlplane.infra.spark import pyspark_home
from devstack import hadoop_release
from devstack.hadoop import HadoopCluster, new_hadoop_cluster
from devstack.hadoop_config import site_xml


def parse(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    assert root.tag == "configuration"
    return {prop.findtext("name"): prop.findtext("value") for prop in root.iter("property")}


@pytest.fixture
def cluster(tmp_path) -> HadoopCluster:
    return new_hadoop_cluster(tmp_path)


def test_site_xml_round_trips_values_that_need_escaping():
    properties = {"a.b": "x<y & z>\"'", "port": 8020, "empty": ""}
    assert parse(site_xml(properties)) == {"a.b": "x<y & z>\"'", "port": "8020", "empty": ""}


def test_hadoop_version_is_that_of_pysparks_client_jars():
    version = hadoop_release.hadoop_version()
    assert (pyspark_home() / "jars" / f"hadoop-client-api-{version}.jar").exists()
    assert re.fullmatch(r"3\.\d+\.\d+", version)
    assert f"org.apache.hadoop:hadoop-hdfs:{version}" in hadoop_release.daemon_artifacts(version)


def test_every_daemon_has_its_own_loopback_port(cluster):
    ports = [*cluster.ports.values(),
             *(p for nm in cluster.node_managers for p in (nm.port, nm.localizer_port, nm.webapp_port))]
    assert len(ports) == len(set(ports)) == 10 + 3 * 2
    assert cluster.namenode_uri == f"hdfs://127.0.0.1:{cluster.ports['namenode']}"
    assert cluster.resourcemanager_url == f"http://127.0.0.1:{cluster.ports['rm_webapp']}"
    assert [nm.node_id for nm in cluster.node_managers] == [f"127.0.0.1:{nm.port}" for nm in cluster.node_managers]


def test_shared_conf_points_clients_at_hdfs_and_the_resourcemanager(cluster):
    files = cluster.config_files()
    assert set(files) == {"core-site.xml", "hdfs-site.xml", "yarn-site.xml", "capacity-scheduler.xml",
                          "log4j.properties"}
    core, hdfs, yarn = (parse(files[name]) for name in ("core-site.xml", "hdfs-site.xml", "yarn-site.xml"))
    assert core["fs.defaultFS"] == cluster.namenode_uri
    assert hdfs["dfs.replication"] == "1" and hdfs["dfs.permissions.enabled"] == "false"
    assert hdfs["dfs.namenode.rpc-address"] == f"127.0.0.1:{cluster.ports['namenode']}"
    assert yarn["yarn.resourcemanager.address"] == f"127.0.0.1:{cluster.ports['rm']}"
    assert yarn["yarn.resourcemanager.scheduler.address"] == f"127.0.0.1:{cluster.ports['rm_scheduler']}"
    assert yarn["yarn.resourcemanager.am.max-attempts"] == "2"
    assert int(yarn["yarn.nm.liveness-monitor.expiry-interval-ms"]) <= 15_000
    assert (yarn["yarn.scheduler.minimum-allocation-mb"], yarn["yarn.scheduler.maximum-allocation-mb"]) == \
        ("256", "4096")
    assert yarn["yarn.nodemanager.vmem-check-enabled"] == yarn["yarn.nodemanager.pmem-check-enabled"] == "false"
    assert yarn["yarn.nodemanager.delete.debug-delay-sec"] == "0"
    assert not any(key.startswith(("yarn.nodemanager.local-dirs", "yarn.nodemanager.address")) for key in yarn)
    # Nothing of the test bed is written outside its home.
    for path in (core["hadoop.tmp.dir"], hdfs["dfs.namenode.name.dir"], hdfs["dfs.datanode.data.dir"],
                 yarn["yarn.node-labels.fs-store.root-dir"].removeprefix("file://")):
        assert Path(path).is_relative_to(cluster.home)


def test_each_nodemanager_has_its_own_ports_and_directories(cluster):
    first, second = (parse(cluster.config_files(nm)["yarn-site.xml"]) for nm in cluster.node_managers)
    for site, nm in zip((first, second), cluster.node_managers, strict=True):
        assert site["yarn.nodemanager.address"] == f"127.0.0.1:{nm.port}"
        assert site["yarn.nodemanager.webapp.address"] == f"127.0.0.1:{nm.webapp_port}"
        assert site["yarn.nodemanager.local-dirs"] == str(Path(cluster.home) / nm.role / "local")
        assert site["yarn.nodemanager.log-dirs"] == str(Path(cluster.home) / nm.role / "logs")
        assert site["yarn.nodemanager.resource.memory-mb"] == "6144"
        assert site["yarn.nodemanager.resource.cpu-vcores"] == "8"
    assert first["yarn.nodemanager.local-dirs"] != second["yarn.nodemanager.local-dirs"]
    # Shared settings are the same everywhere.
    assert first["yarn.resourcemanager.resource-tracker.address"] == \
        second["yarn.resourcemanager.resource-tracker.address"]


def test_capacity_scheduler_has_one_default_queue(cluster):
    scheduler = parse(cluster.config_files()["capacity-scheduler.xml"])
    assert scheduler["yarn.scheduler.capacity.root.queues"] == "default"
    assert scheduler["yarn.scheduler.capacity.root.default.capacity"] == "100"


def test_write_config_lays_out_conf_dirs_and_webapps(cluster):
    cluster.write_config()
    assert parse((cluster.conf_dir / "core-site.xml").read_text())["fs.defaultFS"] == cluster.namenode_uri
    assert "log4j.rootLogger" in (cluster.conf_dir / "log4j.properties").read_text()
    for nm in cluster.node_managers:
        site = parse((cluster.nodemanager_dir(nm) / "conf" / "yarn-site.xml").read_text())
        assert site["yarn.nodemanager.address"] == f"127.0.0.1:{nm.port}"
    for app in ("hdfs", "datanode"):
        assert (Path(cluster.home) / "classpath" / "webapps" / app).is_dir()


def test_state_round_trip(cluster):
    cluster.pids = {"namenode": 11, "datanode": 12, "resourcemanager": 13}
    cluster.node_managers[0].pid, cluster.node_managers[0].node_id = 21, "localhost:4242"
    again = HadoopCluster.from_dict(cluster.to_dict())
    assert again == cluster
    assert cluster.to_dict()["namenode_uri"] == cluster.namenode_uri


def test_spark_submit_environment_and_properties(cluster):
    env = cluster.submit_env({"PATH": "/usr/bin"})
    assert env["HADOOP_CONF_DIR"] == str(cluster.conf_dir)
    assert env["SPARK_HOME"] == str(pyspark_home())
    assert (Path(env["JAVA_HOME"]) / "bin" / "java").exists()
    assert env["PATH"] == "/usr/bin"
    for archive in env["PYSPARK_ARCHIVES_PATH"].split(","):
        assert Path(archive.removeprefix("local:")).exists()
    conf = cluster.spark_conf("/opt/python")
    assert conf["spark.yarn.jars"] == f"local:{pyspark_home() / 'jars'}/*"
    assert conf["spark.yarn.appMasterEnv.PYSPARK_PYTHON"] == conf["spark.executorEnv.PYSPARK_PYTHON"] == "/opt/python"
