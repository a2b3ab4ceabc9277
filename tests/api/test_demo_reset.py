"""The demo's clean start in the database: only what the demo created is reset (mirrors.services.demo)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import pytest

from mirrors.models import Cluster, Connector, Deployment, Event, MetricMinute, Mirror
from mirrors.services import demo, runtime
from mirrors.services.mirrors import create_mirror
from mirrors.services.overview import overview

pytestmark = pytest.mark.django_db

FIRST = {"east": "127.0.0.1:9101", "west": "127.0.0.1:9102"}
SECOND = {"east": "127.0.0.1:9201", "west": "127.0.0.1:9202"}


@pytest.fixture(autouse=True)
def _own_var_dir(settings, tmp_path, fake_redis, monkeypatch):
    """The record and the mirrors' folders in a folder of the test's own; Redis in memory."""
    settings.VAR_DIR = tmp_path / "var"
    settings.DATA_DIR = tmp_path / "var" / "data"
    settings.CHECKPOINT_ROOT = (tmp_path / "var" / "data" / "checkpoints").as_uri()
    monkeypatch.setattr(demo, "get_redis", lambda: fake_redis)
    monkeypatch.setattr(demo.runtime, "running_apps", lambda: {})


def first_run() -> Mirror:
    demo.reset(FIRST)
    return demo.create_demo_mirror(demo.LOCAL_SPARK)


def leave_traces(mirror: Mirror) -> Path:
    """What a run leaves: the application's deployment, metrics, events, checkpoint and work folder."""
    Deployment.objects.create(mirror_name=mirror.name, state="running", pid=4242, generation=mirror.generation)
    Event.objects.create(kind=Event.Kind.ACTION, actor="admin", action="failover", mirror=mirror.name)
    MetricMinute.objects.create(mirror_name=mirror.name, minute="2025-01-01T00:00:00Z", data={})
    checkpoint = Path(urlparse(runtime.checkpoint_location(mirror.name)).path)
    (checkpoint / "offsets").mkdir(parents=True)
    runtime.work_dir(mirror.name).mkdir(parents=True)
    return checkpoint


def desired(name: str) -> set[str]:
    return set(Connector.objects.filter(mirror__name=name).values_list("desired_state", flat=True))


def test_a_second_run_replaces_the_demo_mirror_and_stops_others_on_its_clusters():
    before = first_run()
    checkpoint = leave_traces(before)
    east, west = Cluster.objects.get(alias="east"), Cluster.objects.get(alias="west")
    create_mirror(name="orders-copy", source=east, target=west, topics="orders")
    create_mirror(name="back-again", source=west, target=east)
    Connector.objects.filter(mirror__name="back-again").update(desired_state="stopped")
    elsewhere = [Cluster.objects.create(alias=a, bootstrap_servers=f"{a}.example:9092") for a in ("prod-a", "prod-b")]
    create_mirror(name="prod-copy", source=elsewhere[0], target=elsewhere[1])

    done = demo.reset(SECOND)
    after = demo.create_demo_mirror(demo.LOCAL_SPARK)

    assert done.removed == ["east-to-west"] and done.stopped == ["orders-copy"]
    assert Mirror.objects.filter(name="east-to-west").count() == 1
    assert after.pk != before.pk and after.generation == 1
    assert not Deployment.objects.filter(mirror_name="east-to-west").exists()
    assert not MetricMinute.objects.filter(mirror_name="east-to-west").exists()
    assert not Event.objects.filter(mirror="east-to-west").exists(), "the removed mirror's events went with it"
    assert not checkpoint.exists() and not runtime.work_dir("east-to-west").exists()
    assert {c.alias: (c.pk, c.bootstrap_servers) for c in Cluster.objects.filter(alias__in=SECOND)} == {
        "east": (east.pk, SECOND["east"]), "west": (west.pk, SECOND["west"])}
    assert desired("orders-copy") == {"stopped"}
    assert desired("prod-copy") == {"running"}, "a mirror between other clusters is left alone"
    health = {row["name"]: row["health"] for row in overview()["mirrors"]}
    assert health["orders-copy"] == "stopped"
    said = Event.objects.get(actor="demo", mirror="orders-copy")
    assert "new, empty" in said.detail
    assert not Event.objects.filter(actor="demo").exclude(mirror="orders-copy").exists()
    assert set(json.loads(demo.record_file().read_text())["mirrors"]) == {"east-to-west"}


def test_names_the_demo_did_not_create_are_refused_and_nothing_changes():
    first_run()
    demo.record_file().unlink()  # as if someone else made these objects in another database's life
    Cluster.objects.filter(alias="east").update(bootstrap_servers="kafka.example:9092")
    with pytest.raises(demo.DemoConflict, match="cluster named 'east'"):
        demo.reset(SECOND)
    assert Cluster.objects.get(alias="east").bootstrap_servers == "kafka.example:9092"
    assert Mirror.objects.filter(name="east-to-west").exists()


def test_a_mirror_named_like_the_demos_but_made_by_someone_else_is_refused():
    first_run()
    Mirror.objects.filter(name="east-to-west").delete()
    mine = create_mirror(name="east-to-west", source=Cluster.objects.get(alias="west"),
                         target=Cluster.objects.get(alias="east"))
    with pytest.raises(demo.DemoConflict, match="mirror named 'east-to-west'"):
        demo.reset(SECOND)
    assert Mirror.objects.get(name="east-to-west").pk == mine.pk


def test_a_database_from_before_the_record_is_taken_as_the_demos():
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:9101")
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:9102")
    old = create_mirror(name="east-to-west", source=east, target=west)
    done = demo.reset(SECOND)
    assert done.removed == ["east-to-west"] and not Mirror.objects.filter(pk=old.pk).exists()
    assert Cluster.objects.get(alias="east").bootstrap_servers == SECOND["east"]
