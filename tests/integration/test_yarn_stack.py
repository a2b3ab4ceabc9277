"""The Hadoop test bed of the dev stack: HDFS and YARN with two NodeManagers, as `devstack up --yarn` starts it.

Real daemons, a real HDFS round trip through Hadoop's FileSystem (FsShell on pyspark's own client
jars), and a real PySpark application submitted in cluster deploy mode: its driver runs in the
ApplicationMaster's container on one of the NodeManagers and writes its result to HDFS.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from controlplane.infra import processes
from controlplane.infra.spark import pyspark_home
from devstack.hadoop import HadoopCluster
from devstack.hadoop_release import java_home

APP = """
import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
count = spark.range(1_000_000).count()
spark.sparkContext.parallelize([f"count={count}"], 1).saveAsTextFile(sys.argv[1])
spark.stop()
"""


def fs_shell(cluster: HadoopCluster, *args: str) -> subprocess.CompletedProcess:
    """`hadoop fs ARGS` through pyspark's Hadoop client jars, configured by the cluster's conf dir."""
    classpath = os.pathsep.join([str(cluster.conf_dir), str(pyspark_home() / "jars" / "*")])
    return subprocess.run([str(Path(java_home()) / "bin" / "java"), "-Xmx256m", "-cp", classpath,
                           "org.apache.hadoop.fs.FsShell", *args],
                          env=cluster.submit_env(), capture_output=True, text=True, timeout=120, check=False)


def rm_get(cluster: HadoopCluster, path: str) -> dict:
    with urllib.request.urlopen(f"{cluster.resourcemanager_url}{path}", timeout=10) as response:
        return json.load(response)


def test_devstack_status_shows_hdfs_and_yarn(yarn_cluster, devstack, monkeypatch):
    monkeypatch.setenv("MIRRORPLANE_DEVSTACK_DIR", str(devstack.root))
    out = StringIO()
    call_command("devstack", "status", "--json", stdout=out)
    status = json.loads(out.getvalue())
    assert status["yarn"]["resourcemanager"] == yarn_cluster.resourcemanager_url
    assert status["yarn"]["resourcemanager"].startswith("http://127.0.0.1:")
    assert status["yarn"]["running"]
    nodemanagers = status["yarn"]["nodemanagers"]
    assert len(nodemanagers) == 2
    assert all(node["running"] and node["pid"] for node in nodemanagers)
    assert len({node["node_id"] for node in nodemanagers}) == 2
    assert status["hdfs"]["namenode"] == yarn_cluster.namenode_uri
    assert status["hdfs"]["namenode"].startswith("hdfs://127.0.0.1:")
    assert status["hdfs"]["running"]

    # The ResourceManager agrees: both NodeManagers RUNNING under the node ids the status shows.
    nodes = rm_get(yarn_cluster, "/ws/v1/cluster/nodes")["nodes"]["node"]
    assert {node["id"] for node in nodes if node["state"] == "RUNNING"} == {n["node_id"] for n in nodemanagers}

    plain = StringIO()
    call_command("devstack", "status", stdout=plain)
    assert f"hdfs namenode    {yarn_cluster.namenode_uri}" in plain.getvalue()
    assert plain.getvalue().count("yarn nodemanager") == 2


def test_hdfs_round_trip_through_hadoops_filesystem(yarn_cluster, tmp_path, unique):
    local = tmp_path / "hello.txt"
    local.write_text(f"hello from {unique}\n")
    target = f"{yarn_cluster.namenode_uri}/tmp/roundtrip-{unique}/hello.txt"
    assert fs_shell(yarn_cluster, "-mkdir", "-p", f"/tmp/roundtrip-{unique}").returncode == 0
    put = fs_shell(yarn_cluster, "-put", str(local), target)
    assert put.returncode == 0, put.stderr[-2000:]
    cat = fs_shell(yarn_cluster, "-cat", f"/tmp/roundtrip-{unique}/hello.txt")  # relative to fs.defaultFS
    assert cat.returncode == 0, cat.stderr[-2000:]
    assert cat.stdout == f"hello from {unique}\n"


def test_pyspark_app_in_cluster_deploy_mode(yarn_cluster, tmp_path, unique, figures):
    app = tmp_path / "count_app.py"
    app.write_text(APP)
    output = f"{yarn_cluster.namenode_uri}/tmp/yarn-app-{unique}"
    tag = f"yarn-stack-test-{unique}"
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--master", "yarn", "--deploy-mode", "cluster",
            "--name", f"yarn-stack-{unique}", "--driver-memory", "512m", "--executor-memory", "512m",
            "--num-executors", "1", "--executor-cores", "1",
            "--conf", "spark.yarn.submit.waitAppCompletion=true", "--conf", f"spark.yarn.tags={tag}"]
    for key, value in yarn_cluster.spark_conf().items():
        argv += ["--conf", f"{key}={value}"]
    argv += [str(app), output]

    started = time.monotonic()
    submitted = subprocess.run(argv, env=yarn_cluster.submit_env(), capture_output=True, text=True, timeout=300,
                               check=False)
    elapsed = time.monotonic() - started
    assert submitted.returncode == 0, submitted.stderr[-4000:]
    figures(f"spark-submit --deploy-mode cluster of a PySpark app on YARN took {elapsed:.1f} s "
            "(submission to FINISHED)")
    print(f"cluster-mode spark-submit: {elapsed:.1f} s")

    match = re.search(r"Submitted application (application_\d+_\d+)", submitted.stderr)
    assert match, submitted.stderr[-4000:]
    application_id = match.group(1)
    # Found by its tag as well (YARN keeps tags lower-case).
    by_tag = rm_get(yarn_cluster, f"/ws/v1/cluster/apps?applicationTags={tag}")["apps"]["app"]
    assert [a["id"] for a in by_tag] == [application_id]

    report = rm_get(yarn_cluster, f"/ws/v1/cluster/apps/{application_id}")["app"]
    assert (report["state"], report["finalStatus"]) == ("FINISHED", "SUCCEEDED"), report["diagnostics"]
    node_ids = {node["node_id"] for node in yarn_cluster.nodemanagers()}
    assert report["masterNodeId"] in node_ids
    def attempt() -> dict:
        [only] = rm_get(yarn_cluster, f"/ws/v1/cluster/apps/{application_id}/appattempts")["appAttempts"]["appAttempt"]
        return only

    # The attempt may still be FINISHING (unregistering) for a moment after the application FINISHED.
    assert processes.wait_until(lambda: attempt()["appAttemptState"] == "FINISHED", 30), attempt()
    assert attempt()["nodeId"] in node_ids

    cat = fs_shell(yarn_cluster, "-cat", f"{output}/part-*")
    assert cat.returncode == 0, cat.stderr[-2000:]
    assert cat.stdout.strip() == "count=1000000"
