"""The reconcile pass against a fake process table and an in-memory Redis: its rules, fast."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from mirrorcore import channel
from mirrors.engines import local as local_engine
from mirrors.models import Cluster, Connector, Deployment
from mirrors.services import metrics, observed, runtime, standby
from mirrors.services import status as status_module
from mirrors.services.mirrors import create_mirror, update_mirror
from mirrors.services.reconcile import Reconciler, backoff_seconds
from tests.fakes import FakeRedis

pytestmark = pytest.mark.django_db


class FakeProcesses:
    """Stands in for the process table and spark-submit."""

    def __init__(self, monkeypatch):
        self.apps: dict[str, runtime.AppProcesses] = {}
        self.submitted: list[str] = []
        self.stopped: list[tuple[str, list[int]]] = []
        self.next_pid = 1000
        monkeypatch.setattr(runtime, "running_apps", lambda: {k: v for k, v in self.apps.items() if v.groups})
        monkeypatch.setattr(runtime, "prepare", lambda mirror: mirror)  # the fake start needs the mirror only
        monkeypatch.setattr(runtime, "start", lambda name, mirror: self.submit(mirror))
        monkeypatch.setattr(standby, "claim", lambda mirror, job: None)
        monkeypatch.setattr(runtime, "stop", self.stop)
        monkeypatch.setattr(local_engine.processes, "reap", lambda pid: None)
        monkeypatch.setattr(runtime, "_group_of", lambda pid: None)  # fake pids are never real processes

    def submit(self, mirror):
        self.next_pid += 1
        self.apps[mirror.name] = runtime.AppProcesses({self.next_pid: [self.next_pid, self.next_pid + 1]})
        self.submitted.append(mirror.name)
        return self.next_pid

    def stop(self, name, app):
        self.stopped.append((name, sorted(app.groups)))
        current = self.apps.get(name)
        if current:
            for pgid in list(app.groups):
                current.groups.pop(pgid, None)

    def kill(self, name):
        self.apps[name] = runtime.AppProcesses()


@pytest.fixture
def world(monkeypatch):
    fake = FakeProcesses(monkeypatch)
    redis = FakeRedis()
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m", source=east, target=west)
    return fake, redis, mirror


def publish(redis, mirror, state="RUNNING", generation=None, restart=0):
    status = {"generation": generation or mirror.generation, "connectors": {
        kind: {"state": state, "error": None, "tasks": [{"id": 0, "state": state}], "restart": restart}
        for kind in ("source", "heartbeat")}}
    channel.publish_status(redis, mirror.name, status)


def test_submits_once_and_publishes_the_desired_state(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    Reconciler(redis).run()
    assert fake.submitted == ["m"]
    desired = channel.read_desired(redis, "m")
    assert desired.generation == 1 and desired.connectors["source"].state == "running"
    assert Deployment.objects.get(mirror_name="m").state == "starting"


def test_observed_state_comes_from_the_application(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror)
    Reconciler(redis).run()
    states = dict(Connector.objects.values_list("kind", "state"))
    assert states == {"source": "RUNNING", "heartbeat": "RUNNING", "checkpoint": "UNASSIGNED"}
    assert Deployment.objects.get(mirror_name="m").state == "running"


@pytest.fixture
def status_reads(world, monkeypatch):
    """The status document reads the world's Redis."""
    for module in (observed, metrics):
        monkeypatch.setattr(module, "get_redis", lambda: world[1])


def connector_states(document):
    return {kind: c["state"] for kind, c in document["connectors"].items()}


def test_the_status_document_shows_a_report_made_since_the_last_pass(world, status_reads):
    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror)  # the application reports before the next pass records it
    document = status_module.describe(mirror)
    assert document["application"]["state"] == "running" and document["progress"] is not None
    assert connector_states(document) == {"source": "RUNNING", "heartbeat": "RUNNING", "checkpoint": "UNASSIGNED"}
    assert document["connectors"]["source"]["tasks"] == [{"id": 0, "state": "RUNNING"}]
    assert Connector.objects.get(kind="source").state == "UNASSIGNED"
    Reconciler(redis).run()
    assert connector_states(status_module.describe(mirror)) == connector_states(document)


def test_the_status_document_ignores_reports_older_than_a_restart_or_from_a_dead_application(world, status_reads):
    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror)
    Connector.objects.filter(kind="source").update(restart_token=1)
    assert connector_states(status_module.describe(mirror))["source"] == "RESTARTING"
    fake.kill("m")
    Reconciler(redis).run()
    publish(redis, mirror)  # a last report that lands after the pass saw the driver gone
    document = status_module.describe(mirror)
    assert document["application"]["state"] == "backoff" and document["progress"] is None
    assert set(connector_states(document).values()) == {"RESTARTING"}


def test_a_connector_desired_stopped_is_stopped_once_its_application_says_so(world, status_reads):
    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror)
    Connector.objects.filter(kind="source").update(desired_state="stopped")
    assert connector_states(status_module.describe(mirror))["source"] == "RUNNING"  # still halting
    channel.publish_status(redis, mirror.name, {"generation": mirror.generation, "connectors": {
        "source": {"state": "STOPPED", "error": None, "tasks": [], "restart": 0}}})
    assert connector_states(status_module.describe(mirror))["source"] == "STOPPED"
    redis.delete(channel.status_key(mirror.name))  # no application reports: the desired state says
    assert connector_states(status_module.describe(mirror))["source"] == "STOPPED"


def test_verbs_see_the_tasks_and_failures_the_application_reports(world, status_reads):
    from mirrors.services import lifecycle

    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror, state="FAILED")  # reported since the last pass, which recorded no task
    source = Connector.objects.get(kind="source")
    assert source.tasks == [] and status_module.connector_now(source).tasks == [{"id": 0, "state": "FAILED"}]
    assert lifecycle.restart(source, "test", only_failed=True).accepted


def test_a_dead_driver_is_resubmitted_after_backoff(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    fake.kill("m")
    Reconciler(redis).run()
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "backoff" and deployment.consecutive_failures == 1
    assert "exited unexpectedly" in deployment.last_error
    assert Connector.objects.get(kind="source").state == "RESTARTING"
    Deployment.objects.filter(pk=deployment.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    Reconciler(redis).run()
    assert fake.submitted == ["m", "m"]
    assert Deployment.objects.get(mirror_name="m").submissions == 2
    assert Deployment.objects.get(mirror_name="m").restarts == 1


def test_extra_drivers_are_stopped_keeping_the_known_one(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    known = Deployment.objects.get(mirror_name="m").pid
    fake.apps["m"].groups[5000] = [5000]
    fake.apps["m"].groups[6000] = [6001]  # a leftover whose leader died
    Reconciler(redis).run()
    assert sorted(group for name, groups in fake.stopped if name == "m" for group in groups) == [5000, 6000]
    assert list(fake.apps["m"].groups) == [known]


def test_stopping_every_connector_stops_the_application_without_counting_a_failure(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    update_mirror(mirror, connectors={k: {"state": "stopped"} for k in ("source", "checkpoint", "heartbeat")})
    Reconciler(redis).run()
    assert fake.stopped and not fake.apps["m"].groups
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "not_running" and deployment.consecutive_failures == 0
    assert set(Connector.objects.values_list("state", flat=True)) == {"STOPPED"}


def test_a_new_generation_replaces_the_application_without_a_failure(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    mirror = update_mirror(mirror, topics="orders")
    assert mirror.generation == 2
    Reconciler(redis).run()  # the old application reads generation 2 and exits by itself
    assert json.loads(redis.get(channel.desired_key("m")))["generation"] == 2
    fake.kill("m")
    Reconciler(redis).run()
    assert fake.submitted == ["m", "m"]
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.consecutive_failures == 0 and deployment.generation == 2
    assert deployment.restarts == 0, "a configuration change is not a restart"


def test_deleted_mirror_is_stopped_and_forgotten(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    mirror.delete()
    Reconciler(redis).run()
    assert fake.stopped[0][0] == "m"
    assert not Deployment.objects.exists()
    assert redis.get(channel.desired_key("m")) is None


def test_failed_connector_is_restarted_with_a_new_token_after_backoff(world):
    fake, redis, mirror = world
    Reconciler(redis).run()
    publish(redis, mirror, state="FAILED")
    Reconciler(redis).run()
    source = Connector.objects.get(kind="source")
    assert source.state == "FAILED" and source.next_restart_at is not None
    Connector.objects.filter(pk=source.pk).update(next_restart_at=timezone.now() - timedelta(seconds=1))
    Reconciler(redis).run()
    source.refresh_from_db()
    assert source.restart_token == 1 and source.restarts == 1
    assert channel.read_desired(redis, "m").connectors["source"].restart == 1
    assert source.state == "RESTARTING", "until the application acknowledges the new token"


def test_max_restarts_leaves_the_connector_failed(world):
    fake, redis, mirror = world
    Connector.objects.filter(kind="source").update(max_restarts=0)
    Reconciler(redis).run()
    publish(redis, mirror, state="FAILED")
    Reconciler(redis).run()
    Reconciler(redis).run()
    source = Connector.objects.get(kind="source")
    assert source.state == "FAILED" and source.restarts == 0 and source.next_restart_at is None


def test_backoff_doubles_up_to_a_minute():
    assert [backoff_seconds(n) for n in (1, 2, 3, 4, 7, 20)] == [1, 2, 4, 8, 60, 60]


def test_application_gives_up_after_max_restarts_and_an_operator_restart_revives_it(world):
    from mirrors.models import Event
    from mirrors.services import lifecycle

    fake, redis, mirror = world
    Connector.objects.filter(mirror=mirror).update(max_restarts=2)
    Reconciler(redis).run()
    for _ in range(3):
        fake.kill("m")
        Reconciler(redis).run()
        Deployment.objects.filter(mirror_name="m").update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        Reconciler(redis).run()
    deployment = Deployment.objects.get(mirror_name="m")
    assert fake.submitted == ["m", "m", "m"], "two restarts, then no more"
    assert deployment.state == "failed" and deployment.restarts == 2
    assert "reached the limit 2" in deployment.last_error
    assert set(Connector.objects.values_list("state", flat=True)) == {"FAILED"}
    assert "exited unexpectedly" in Connector.objects.get(kind="source").error
    steps = list(Event.objects.filter(mirror="m", action="application").order_by("id")
                 .values_list("from_state", "to_state"))
    assert steps.count(("running", "backoff")) + steps.count(("starting", "backoff")) == 2
    assert steps[-1][1] == "failed"

    lifecycle.restart(Connector.objects.get(kind="source"), "alice")
    Reconciler(redis).run()
    assert fake.submitted == ["m", "m", "m", "m"]
    assert Deployment.objects.get(mirror_name="m").restarts == 0
    assert Event.objects.filter(actor="alice", action="restart", connector="source").exists()


def test_restart_limit_is_the_strictest_of_the_connectors_that_should_run(world):
    from mirrors.services.reconcile import restart_limit

    _, _, mirror = world
    connectors = list(mirror.connectors.all())
    assert restart_limit(connectors) is None
    connectors[0].max_restarts, connectors[1].max_restarts = 5, 3
    assert restart_limit(connectors) == 3
    connectors[1].desired_state = "stopped"
    assert restart_limit(connectors) == 5
    for connector in connectors:
        connector.auto_restart_enabled = False
    assert restart_limit(connectors) == 0


def test_an_application_silent_for_the_stale_time_is_stopped_and_resubmitted(world, settings):
    fake, redis, mirror = world
    settings.APP_STALE_SECONDS = 60
    Reconciler(redis).run()
    publish(redis, mirror)
    Reconciler(redis).run()
    assert Deployment.objects.get(mirror_name="m").last_report_at is not None
    redis.delete(channel.status_key("m"))  # the application stops reporting but its process lives on
    Reconciler(redis).run()
    assert Deployment.objects.get(mirror_name="m").state == "running", "not yet stale"
    long_ago = timezone.now() - timedelta(seconds=61)
    Deployment.objects.filter(mirror_name="m").update(last_report_at=long_ago, submitted_at=long_ago)
    Reconciler(redis).run()
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "backoff" and "no status report for 60s" in deployment.last_error
    assert fake.stopped and not fake.apps["m"].groups
