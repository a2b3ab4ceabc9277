"""Where the local Hadoop test bed's daemons listen and keep their files, and the configuration they
and their clients read: `*-site.xml` of the shared conf dir and of each NodeManager, Spark's settings
for YARN on it. Nothing here starts a process (devstack/hadoop.py does).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from devstack.hadoop_release import java_home

HOST = "127.0.0.1"
# HttpServer2 serves `webapps/<name>` from the classpath: NameNode, DataNode, SecondaryNameNode, JournalNode.
HDFS_WEBAPPS = ("hdfs", "datanode", "secondary", "journal")
_LOG4J = """log4j.rootLogger=INFO, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.org.apache.hadoop.hdfs.StateChange=WARN
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace=WARN
log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=WARN
log4j.logger.BlockStateChange=WARN
log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger=WARN
log4j.logger.org.apache.hadoop.yarn.server.nodemanager.NMAuditLogger=WARN
log4j.logger.org.eclipse.jetty=WARN
log4j.logger.http.requests=WARN
"""

# Spark properties that keep a YARN application's driver and executors on loopback, like the test bed's
# daemons (the host name resolves to loopback, but Spark would bind to the first interface's address).
LOOPBACK_SPARK_CONF = {
    "spark.yarn.appMasterEnv.SPARK_LOCAL_IP": HOST,
    "spark.executorEnv.SPARK_LOCAL_IP": HOST,
}


def site_xml(properties: Mapping[str, object]) -> str:
    """A Hadoop `*-site.xml` document holding `properties` (values as strings, XML-escaped)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<configuration>"]
    for name, value in properties.items():
        lines.append(f"  <property><name>{escape(name)}</name><value>{escape(str(value))}</value></property>")
    lines.append("</configuration>")
    return "\n".join(lines) + "\n"


@dataclass
class NodeManager:
    """One NodeManager: its ports and its process. Its node id is `<host>:<port>`, the host being what
    the NodeManager resolves its address to (`localhost` for 127.0.0.1); it is taken from the
    ResourceManager once the node registered."""

    index: int
    port: int
    localizer_port: int
    webapp_port: int
    pid: int = 0
    node_id: str = ""

    def __post_init__(self) -> None:
        self.node_id = self.node_id or f"{HOST}:{self.port}"

    @property
    def role(self) -> str:
        return f"nodemanager-{self.index}"


@dataclass
class HadoopLayout:
    """HDFS and YARN on loopback as configured: `ports` holds the HDFS and ResourceManager ports by
    name, `node_managers` the NodeManagers."""

    home: str
    ports: dict[str, int]
    node_managers: list[NodeManager]
    nodemanager_memory_mb: int = 6144
    nodemanager_vcores: int = 8
    version: str = ""

    # -- addresses --------------------------------------------------------------------------

    @property
    def namenode_uri(self) -> str:
        return f"hdfs://{HOST}:{self.ports['namenode']}"

    @property
    def namenode_http(self) -> str:
        return f"http://{HOST}:{self.ports['namenode_http']}"

    @property
    def resourcemanager_url(self) -> str:
        return f"http://{HOST}:{self.ports['rm_webapp']}"

    @property
    def conf_dir(self) -> Path:
        """The clients' HADOOP_CONF_DIR."""
        return Path(self.home) / "conf"

    @property
    def log_dir(self) -> Path:
        return Path(self.home) / "logs"

    def nodemanager_dir(self, nm: NodeManager) -> Path:
        return Path(self.home) / nm.role

    # -- configuration ----------------------------------------------------------------------

    def core_site(self) -> dict[str, str]:
        return {
            "fs.defaultFS": self.namenode_uri,
            "hadoop.tmp.dir": str(Path(self.home) / "tmp"),
        }

    def hdfs_site(self) -> dict[str, str]:
        home, ports = Path(self.home), self.ports
        return {
            "dfs.namenode.name.dir": str(home / "namenode" / "name"),
            "dfs.datanode.data.dir": str(home / "datanode" / "data"),
            "dfs.namenode.rpc-address": f"{HOST}:{ports['namenode']}",
            "dfs.namenode.http-address": f"{HOST}:{ports['namenode_http']}",
            "dfs.namenode.secondary.http-address": f"{HOST}:0",
            "dfs.datanode.address": f"{HOST}:{ports['datanode']}",
            "dfs.datanode.http.address": f"{HOST}:{ports['datanode_http']}",
            "dfs.datanode.ipc.address": f"{HOST}:{ports['datanode_ipc']}",
            "dfs.datanode.hostname": HOST,
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.replication": "1",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.safemode.extension": "0",
        }

    def yarn_site(self) -> dict[str, str]:
        """What the ResourceManager, the NodeManagers and YARN clients (Spark's AM too) share."""
        ports = self.ports
        return {
            "yarn.resourcemanager.hostname": HOST,
            "yarn.resourcemanager.address": f"{HOST}:{ports['rm']}",
            "yarn.resourcemanager.scheduler.address": f"{HOST}:{ports['rm_scheduler']}",
            "yarn.resourcemanager.resource-tracker.address": f"{HOST}:{ports['rm_tracker']}",
            "yarn.resourcemanager.admin.address": f"{HOST}:{ports['rm_admin']}",
            "yarn.resourcemanager.webapp.address": f"{HOST}:{ports['rm_webapp']}",
            "yarn.resourcemanager.webapp.https.address": f"{HOST}:0",
            "yarn.resourcemanager.am.max-attempts": "2",
            "yarn.resourcemanager.connect.retry-interval.ms": "1000",
            # A NodeManager that stops heartbeating is LOST after 10 s (checked every third of that).
            "yarn.nm.liveness-monitor.expiry-interval-ms": "10000",
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "1000",
            # An AM gives up on a NodeManager it cannot reach after 20 s, not 3 minutes.
            "yarn.client.nodemanager-connect.max-wait-ms": "20000",
            "yarn.client.nodemanager-connect.retry-interval-ms": "1000",
            "yarn.scheduler.minimum-allocation-mb": "256",
            "yarn.scheduler.maximum-allocation-mb": "4096",
            "yarn.scheduler.minimum-allocation-vcores": "1",
            "yarn.scheduler.maximum-allocation-vcores": str(self.nodemanager_vcores),
            "yarn.nodemanager.resource.memory-mb": str(self.nodemanager_memory_mb),
            "yarn.nodemanager.resource.cpu-vcores": str(self.nodemanager_vcores),
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.delete.debug-delay-sec": "0",
            # A full disk elsewhere on the machine must not turn the test bed's nodes UNHEALTHY.
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "100.0",
            "yarn.nodemanager.hostname": HOST,
            "yarn.timeline-service.enabled": "false",
            "yarn.log-aggregation-enable": "false",
            # The RM's label stores default to /tmp/hadoop-yarn-<user>: keep them with the cluster.
            "yarn.node-labels.fs-store.root-dir": f"file://{Path(self.home) / 'resourcemanager' / 'node-labels'}",
            "yarn.node-attribute.fs-store.root-dir":
                f"file://{Path(self.home) / 'resourcemanager' / 'node-attributes'}",
        }

    def nodemanager_site(self, nm: NodeManager) -> dict[str, str]:
        """yarn-site.xml of one NodeManager: the shared settings plus its ports and directories."""
        directory = self.nodemanager_dir(nm)
        return self.yarn_site() | {
            "yarn.nodemanager.address": f"{HOST}:{nm.port}",
            "yarn.nodemanager.localizer.address": f"{HOST}:{nm.localizer_port}",
            "yarn.nodemanager.webapp.address": f"{HOST}:{nm.webapp_port}",
            "yarn.nodemanager.webapp.https.address": f"{HOST}:0",
            "yarn.nodemanager.local-dirs": str(directory / "local"),
            "yarn.nodemanager.log-dirs": str(directory / "logs"),
            "yarn.nodemanager.recovery.dir": str(directory / "recovery"),
        }

    @staticmethod
    def capacity_scheduler() -> dict[str, str]:
        """One queue, `default`, with all of the cluster; up to half of it may hold application masters
        (in cluster mode a streaming application's driver is its AM, for as long as it runs)."""
        return {
            "yarn.scheduler.capacity.root.queues": "default",
            "yarn.scheduler.capacity.root.default.capacity": "100",
            "yarn.scheduler.capacity.root.default.maximum-capacity": "100",
            "yarn.scheduler.capacity.root.default.state": "RUNNING",
            "yarn.scheduler.capacity.root.default.user-limit-factor": "1",
            "yarn.scheduler.capacity.root.default.acl_submit_applications": "*",
            "yarn.scheduler.capacity.root.default.acl_administer_queue": "*",
            "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
            "yarn.scheduler.capacity.node-locality-delay": "-1",
        }

    def config_files(self, nm: NodeManager | None = None) -> dict[str, str]:
        """File name -> text of a conf dir: the shared one, or a NodeManager's (`nm`)."""
        yarn = self.yarn_site() if nm is None else self.nodemanager_site(nm)
        return {
            "core-site.xml": site_xml(self.core_site()),
            "hdfs-site.xml": site_xml(self.hdfs_site()),
            "yarn-site.xml": site_xml(yarn),
            "capacity-scheduler.xml": site_xml(self.capacity_scheduler()),
            "log4j.properties": _LOG4J,
        }

    def write_config(self) -> None:
        """Write the shared conf dir, each NodeManager's, and the web application folders."""
        for directory, nm in [(self.conf_dir, None)] + [(self.nodemanager_dir(n) / "conf", n)
                                                        for n in self.node_managers]:
            directory.mkdir(parents=True, exist_ok=True)
            for name, text in self.config_files(nm).items():
                (directory / name).write_text(text)
        for app in HDFS_WEBAPPS:
            (Path(self.home) / "classpath" / "webapps" / app).mkdir(parents=True, exist_ok=True)

    # -- clients ----------------------------------------------------------------------------

    def submit_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for `spark-submit --master yarn` (and any Hadoop client) against this cluster."""
        from controlplane.infra.spark import pyspark_home

        lib = pyspark_home() / "python" / "lib"
        archives = [lib / "pyspark.zip", *sorted(lib.glob("py4j-*-src.zip"))]
        return dict(
            os.environ if base is None else base,
            HADOOP_CONF_DIR=str(self.conf_dir), YARN_CONF_DIR=str(self.conf_dir),
            SPARK_HOME=str(pyspark_home()), JAVA_HOME=java_home(), SPARK_LOCAL_IP=HOST,
            # Every node is this machine: containers read pyspark's Python files where they are.
            PYSPARK_ARCHIVES_PATH=",".join(f"local:{path}" for path in archives),
        )

    def spark_conf(self, python: str | None = None) -> dict[str, str]:
        """Spark properties for YARN on this test bed: Spark's jars are read in place on every node
        (`local:`, nothing uploaded), the AM and the executors run `python` (default: this interpreter)
        and bind to loopback like the daemons."""
        from controlplane.infra.spark import pyspark_home

        python = python or sys.executable
        return {
            "spark.yarn.jars": f"local:{pyspark_home() / 'jars'}/*",
            "spark.pyspark.python": python,
            "spark.yarn.appMasterEnv.PYSPARK_PYTHON": python,
            "spark.executorEnv.PYSPARK_PYTHON": python,
        } | LOOPBACK_SPARK_CONF
