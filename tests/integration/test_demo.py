"""`./manage.py demo`'s set-up step run twice, each time in a process of its own on a database of its own:
the second run starts new, empty clusters and shows exactly one demo mirror, fresh; nothing of the first
run's mirror is revived, and a mirror someone made on the demo's clusters is stopped, not run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from devstack.stack import Devstack

ROOT = Path(__file__).resolve().parents[2]

SET_UP = """
import json, os
from pathlib import Path
from urllib.parse import urlparse
from confluent_kafka import Consumer, Producer, TopicPartition
from django.conf import settings
from django.utils import timezone
from mirrors.models import Cluster, Connector, Deployment, Event, MetricMinute, Mirror
from mirrors.services import demo, runtime
from mirrors.services.mirrors import create_mirror
from mirrors.services.overview import overview

said = []
stack = demo.prepare(settings.VAR_DIR / "demo-stack", "local", said.append)
east = stack.clusters["east"].bootstrap_servers
checkpoint = Path(urlparse(runtime.checkpoint_location(demo.MIRROR)).path)
if os.environ["DEMO_RUN"] == "first":  # what a run leaves behind, and what an operator made during it
    mirror = Mirror.objects.get(name=demo.MIRROR)
    Deployment.objects.create(mirror_name=mirror.name, state="running", pid=4242, generation=mirror.generation)
    MetricMinute.objects.create(mirror_name=mirror.name, minute=timezone.now().replace(second=0), data={})
    (checkpoint / "offsets").mkdir(parents=True)
    create_mirror(name="orders-copy", source=Cluster.objects.get(alias="east"),
                  target=Cluster.objects.get(alias="west"), topics="orders")
    producer = Producer({"bootstrap.servers": east})
    for i in range(10):
        producer.produce("orders", f"first run {i}".encode())
    producer.flush(30)
consumer = Consumer({"bootstrap.servers": east, "group.id": "probe"})
records = sum(consumer.get_watermark_offsets(TopicPartition("orders", p), timeout=10)[1]
              for p in range(demo.TOPICS["orders"]))
consumer.close()
rows = {row["name"]: row for row in overview()["mirrors"]}
print(json.dumps({
    "said": said, "cluster_id": stack.clusters["east"].cluster_id, "orders_records": records,
    "mirrors": {m.name: {"id": m.pk, "generation": m.generation, "health": rows[m.name]["health"],
                         "desired": sorted({c.desired_state for c in Connector.objects.filter(mirror=m)})}
                for m in Mirror.objects.all()},
    "deployments": list(Deployment.objects.values_list("mirror_name", flat=True)),
    "metric_rows": MetricMinute.objects.filter(mirror_name=demo.MIRROR).count(),
    "checkpoint": checkpoint.exists(),
    "demo_events": list(Event.objects.filter(actor="demo").values_list("mirror", "detail")),
}))
"""


def set_up(env: dict[str, str], run: str) -> dict:
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", SET_UP], capture_output=True, text=True,
                            env=env | {"DEMO_RUN": run}, cwd=ROOT, check=False, timeout=300)
    assert result.returncode == 0, f"{run} set-up failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_demo_starts_clean(tmp_path, figures):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MIRRORPLANE_", "DJANGO_"))}
    env |= {"DJANGO_SETTINGS_MODULE": "controlplane.settings", "MIRRORPLANE_VAR_DIR": str(tmp_path / "var"),
            "MIRRORPLANE_CACHE": os.environ.get("MIRRORPLANE_CACHE", str(Path.home() / ".cache" / "mirrorplane"))}
    try:
        first = set_up(env, "first")
        second = set_up(env, "second")
    finally:
        Devstack.load(tmp_path / "var" / "demo-stack").down()

    assert first["orders_records"] == 10 and set(first["mirrors"]) == {"east-to-west", "orders-copy"}
    demo_mirror, before = second["mirrors"]["east-to-west"], first["mirrors"]["east-to-west"]
    assert [name for name in second["mirrors"] if name == "east-to-west"] == ["east-to-west"]
    assert demo_mirror["id"] != before["id"] and demo_mirror["generation"] == 1, "the demo mirror is a new one"
    assert demo_mirror["desired"] == ["running"]
    assert second["deployments"] == [] and second["metric_rows"] == 0 and not second["checkpoint"], \
        "nothing of the first run's application is left for the new demo mirror to resume from"
    assert second["mirrors"]["orders-copy"]["health"] == "stopped", "the operator's mirror is not revived"
    assert second["mirrors"]["orders-copy"]["desired"] == ["stopped"]
    assert [mirror for mirror, _ in second["demo_events"]] == ["orders-copy"]
    assert second["cluster_id"] != first["cluster_id"] and second["orders_records"] == 0, "new, empty clusters"
    assert any("removed the demo mirror east-to-west" in line for line in second["said"]), second["said"]
    assert any("stopped mirror orders-copy" in line for line in second["said"]), second["said"]
    assert any("stopped what an earlier run left running" in line for line in second["said"]), second["said"]
    figures("demo set-up twice: the second run removed the first's demo mirror, stopped 1 operator mirror "
            "on the replaced clusters, and started new, empty clusters")
