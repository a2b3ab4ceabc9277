"""`./manage.py devstack up/status/down` with its own clusters, separate from the session's stack."""

import json
import os
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient

from controlplane.infra import processes
from devstack.kafka import KafkaCluster


def manage(*args, env):
    result = subprocess.run([sys.executable, "manage.py", "devstack", *args], capture_output=True, text=True,
                            env=env, check=False, timeout=180)
    assert result.returncode == 0, f"devstack {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_devstack_up_status_down(tmp_path):
    env = {**os.environ, "MIRRORPLANE_DEVSTACK_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "controlplane.settings"}
    env.pop("MIRRORPLANE_REDIS_URL", None)
    try:
        manage("up", "--clusters", "alpha,beta", env=env)
        status = json.loads(manage("status", "--json", env=env))
        assert set(status["clusters"]) == {"alpha", "beta"}
        ids = set()
        for cluster in status["clusters"].values():
            assert cluster["running"]
            metadata = AdminClient({"bootstrap.servers": cluster["bootstrap_servers"]}).list_topics(timeout=10)
            assert len(metadata.brokers) == 1
            ids.add(cluster["cluster_id"])
        assert len(ids) == 2, "each cluster has its own id"
        assert status["redis"]["running"]
        # idempotent: a second `up` starts nothing new
        again = json.loads(manage("up", "--clusters", "alpha,beta", "--json", env=env))
        pids = {alias: cluster["pid"] for alias, cluster in status["clusters"].items()}
        assert {alias: cluster["pid"] for alias, cluster in again["clusters"].items()} == pids
    finally:
        stopped = json.loads(manage("down", "--json", env=env))["stopped"]
    assert len(stopped) == 3
    for cluster in status["clusters"].values():
        assert not processes.is_alive(cluster["pid"])
    assert not processes.is_alive(status["redis"]["pid"])


def test_a_broker_whose_port_another_cluster_answers_on_is_not_taken_for_ready(devstack, tmp_path):
    """A broker that could not bind its port while another cluster's broker answers there: not ready, an error
    (the start then retries on fresh ports), rather than a stack whose two clusters are one."""
    east = devstack.clusters["east"]
    alive = subprocess.Popen(["sleep", "60"])  # stands for the JVM that has not exited yet
    try:
        impostor = KafkaCluster(alias="impostor", home=str(tmp_path), port=east.port,
                                controller_port=processes.free_port())
        impostor._process = alive
        with pytest.raises(RuntimeError, match=f"port {east.port} answers as cluster {east.cluster_id}, not as "
                                               f"this broker's {impostor.cluster_id}"):
            impostor.ready()
        itself = KafkaCluster(alias="east", home=str(tmp_path), port=east.port, controller_port=east.controller_port,
                              cluster_id=east.cluster_id)
        itself._process = alive
        assert itself.ready()
    finally:
        alive.kill()
        alive.wait()
