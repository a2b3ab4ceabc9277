"""`./manage.py devstack up/status/down` with its own clusters, separate from the session's stack."""

import json
import os
import subprocess
import sys

from confluent_kafka.admin import AdminClient

from controlplane.infra import processes


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
