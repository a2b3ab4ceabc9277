"""Supervision through an engine that is not this host's process table: the rules of the pass, fast.

The engine here is an in-memory cluster manager; the same pass on a real YARN cluster is tested in
tests/integration/test_yarn_mirrors.py.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from mirrorcore import channel
from mirrors.engines import Application, Engine, EngineError, Engines, EngineUnavailable, Outcome
from mirrors.models import Cluster, Deployment, Mirror
from mirrors.services.mirrors import create_mirror
from mirrors.services.reconcile import Reconciler, submission_lease_key
from tests.fakes import FakeRedis

pytestmark = pytest.mark.django_db


class ClusterManager(Engine):
    """Applications by id, each with its mirror's tags, like a ResourceManager keeps them."""

    name = "yarn"

    def __init__(self) -> None:
        self.apps: dict[str, Application] = {}
        self.ended: dict[str, str] = {}
        self.submitted: list[str] = []
        self.killed: list[str] = []
        self.reachable = True
        self.refuse: str | None = None
        self.during_submit = lambda: None
        self.sequence = 0

    def live(self, known):
        if not self.reachable:
            raise EngineUnavailable("the YARN ResourceManager at http://rm:8088 is unreachable: connection refused")
        result: dict[str, list[Application]] = {}
        for app in self.apps.values():
            result.setdefault(app.mirror, []).append(app)
        return result

    def submit(self, mirror):
        if self.refuse:
            raise EngineError(self.refuse)
        self.during_submit()
        self.sequence += 1
        app = Application(f"application_1700000000000_{self.sequence:04d}", mirror.name, mirror.generation)
        self.apps[app.id] = app
        self.submitted.append(app.id)
        return app

    def kill(self, application):
        self.killed.append(application.id)
        self.apps.pop(application.id, None)
        self.ended[application.id] = "KILLED"

    def outcome(self, mirror_name, application_id):
        return Outcome(f"YARN application {application_id} FAILED: {self.ended.get(application_id, 'lost')}")

    def die(self, application_id: str, reason: str) -> None:
        self.apps.pop(application_id)
        self.ended[application_id] = reason


class OneEngine(Engines):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._engines = {"yarn": engine}

    def get(self, name):
        return self._engines["yarn"]

    def for_mirror(self, mirror):
        return self._engines["yarn"]

    def configured(self):
        return {"yarn"}


@pytest.fixture
def world():
    engine, redis = ClusterManager(), FakeRedis()
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m", source=east, target=west, spark={"master": "yarn"})
    return engine, redis, mirror


def passes(engine, redis, count=1):
    for _ in range(count):
        Reconciler(redis, OneEngine(engine)).run()


def test_the_deployment_records_engine_application_and_the_desired_state_names_it(world):
    engine, redis, mirror = world
    passes(engine, redis, 2)
    deployment = Deployment.objects.get(mirror_name="m")
    assert engine.submitted == ["application_1700000000000_0001"]
    assert (deployment.engine, deployment.application_id, deployment.state) == (
        "yarn", "application_1700000000000_0001", "starting")
    assert channel.read_desired(redis, "m").application == "application_1700000000000_0001"


def test_two_racing_passes_submit_one_application(world):
    """Pass B runs while pass A is inside spark-submit: B finds A's lease and submits nothing; a pass
    after A finds A's application by its tags and keeps it."""
    engine, redis, mirror = world
    seen_by_b: list[list[str]] = []

    def pass_b_meanwhile():
        thread = threading.Thread(target=lambda: passes(engine, redis))
        thread.start()
        thread.join()
        seen_by_b.append(list(engine.submitted))

    engine.during_submit = pass_b_meanwhile
    passes(engine, redis)  # pass A
    engine.during_submit = lambda: None
    passes(engine, redis, 2)
    assert seen_by_b == [[]], "pass B submitted while pass A held the lease"
    assert engine.submitted == ["application_1700000000000_0001"]
    assert list(engine.apps) == ["application_1700000000000_0001"]
    assert redis.get(submission_lease_key("m")) is None, "the lease is released after the submission"


def test_a_pass_that_wins_the_lease_late_adopts_the_application_it_finds(world):
    """The other pass submitted and released its lease after this pass listed applications: the
    lookup made under the lease finds that application; nothing is submitted twice."""
    engine, redis, mirror = world
    passes(engine, redis)
    first = Deployment.objects.get(mirror_name="m").application_id
    Deployment.objects.filter(mirror_name="m").update(application_id="", state="not_running")  # a stale view
    passes(engine, redis)
    assert engine.submitted == [first]
    assert Deployment.objects.get(mirror_name="m").application_id == first


def test_two_live_applications_keep_the_recorded_one(world):
    engine, redis, mirror = world
    passes(engine, redis)
    recorded = Deployment.objects.get(mirror_name="m").application_id
    intruder = Application("application_1700000000000_0099", "m", mirror.generation)
    engine.apps[intruder.id] = intruder
    passes(engine, redis)
    assert engine.killed == [intruder.id] and list(engine.apps) == [recorded]


def test_an_unreachable_engine_is_not_a_dead_application(world):
    engine, redis, mirror = world
    passes(engine, redis)
    recorded = Deployment.objects.get(mirror_name="m")
    engine.reachable = False
    passes(engine, redis, 3)
    deployment = Deployment.objects.get(mirror_name="m")
    assert engine.submitted == [recorded.application_id], "nothing resubmitted while the engine was silent"
    assert (deployment.application_id, deployment.restarts) == (recorded.application_id, 0)


def test_an_unreachable_engine_fails_a_new_mirror_with_its_reason_up_to_max_restarts(world):
    engine, redis, mirror = world
    mirror.connectors.update(max_restarts=2)
    engine.reachable = False
    for _ in range(6):
        passes(engine, redis)
        Deployment.objects.filter(mirror_name="m").update(next_attempt_at=None)
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "failed" and deployment.restarts == 2, "failed, then restarted again"
    assert "ResourceManager at http://rm:8088 is unreachable" in deployment.last_error
    assert "not restarted: 2 restarts reached the limit 2" in deployment.last_error
    assert engine.submitted == []


def test_a_refused_submission_shows_the_engine_reason(world):
    engine, redis, mirror = world
    mirror.connectors.update(max_restarts=0)
    engine.refuse = "Required AM memory (9000+900 MB) is above the max threshold (4096 MB) of this cluster!"
    passes(engine, redis)
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "failed" and "above the max threshold (4096 MB)" in deployment.last_error
    passes(engine, redis, 3)  # failed stays failed: no crash loop
    again = Deployment.objects.get(mirror_name="m")
    assert (again.state, again.restarts, again.submissions) == ("failed", deployment.restarts, 0)


def test_an_application_that_ended_is_judged_by_its_engine_outcome(world):
    engine, redis, mirror = world
    passes(engine, redis)
    app_id = Deployment.objects.get(mirror_name="m").application_id
    engine.die(app_id, "Application killed: the queue 'nosuch' does not exist")
    passes(engine, redis)
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.state == "backoff" and "queue 'nosuch' does not exist" in deployment.last_error


def test_a_failed_deployment_leaves_nothing_running(world):
    engine, redis, mirror = world
    passes(engine, redis)
    Deployment.objects.filter(mirror_name="m").update(state="failed")
    passes(engine, redis)
    assert engine.apps == {} and engine.killed


def test_a_deleted_mirror_is_forgotten_once_its_application_is_gone(world):
    engine, redis, mirror = world
    passes(engine, redis)
    app_id = Deployment.objects.get(mirror_name="m").application_id
    mirror.delete()
    engine.kill = lambda application: engine.killed.append(application.id)  # YARN kills asynchronously
    engine.checkpoint_location = lambda name: None
    passes(engine, redis)
    assert engine.killed == [app_id] and Deployment.objects.filter(mirror_name="m").exists()
    engine.apps.clear()
    passes(engine, redis)
    assert not Deployment.objects.filter(mirror_name="m").exists()


def test_cluster_mode_command_line_carries_tags_and_resources_but_no_credential(tmp_path):
    from pathlib import Path

    from mirrors.engines.yarn import tags
    from mirrors.services import runtime

    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092", security_protocol="SASL_PLAINTEXT",
                                  sasl_mechanism="PLAIN", username="mirror", password="s3cret-password")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m", source=east, target=west, spark={
        "master": "yarn", "queue": "mirrors", "driver_memory": "768m", "executor_memory": "512m",
        "num_executors": 1, "executor_cores": 2, "conf": {"spark.sql.shuffle.partitions": "1"}})
    config = runtime.write_app_config(mirror, tmp_path / "app.json", work_dir=".",
                                      checkpoint_location="hdfs://nn:9000/mirrorplane/checkpoints/m")
    argv = runtime.cluster_submit_argv(mirror, archive="hdfs://nn:9000/mirrorplane/lib/spark.zip",
                                       code=Path("/cache/runtime.zip"), config=config,
                                       tags=tags("mirrorplane", "m", mirror.generation), python="/venv/bin/python")
    line = " ".join(argv)
    assert "--master yarn --deploy-mode cluster" in line and "--name mirrorplane-m-g1" in line
    for option in ("--queue mirrors", "--driver-memory 768m", "--executor-memory 512m", "--num-executors 1",
                   "--executor-cores 2", "--conf spark.sql.shuffle.partitions=1",
                   "--conf spark.yarn.archive=hdfs://nn:9000/mirrorplane/lib/spark.zip",
                   "--conf spark.yarn.tags=mirrorplane,mirrorplane-mirror-m,mirrorplane-generation-1",
                   "--conf spark.yarn.submit.waitAppCompletion=false", f"--files {config}", "--config=app.json"):
        assert option in line, option
    assert "s3cret-password" not in line
    assert "s3cret-password" in config.read_text() and oct(config.stat().st_mode & 0o777) == "0o600"


def test_a_misplaced_connector_key_is_refused_with_its_name(api):
    Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    response = api.post("/api/v1/mirrors/", {"name": "m", "source": "east", "target": "west", "connectors": {
        "source": {"max_restarts": 1}}}, format="json")
    assert response.status_code == 400
    assert "max_restarts" in str(response.json()) and "unknown key" in str(response.json())
    assert not Cluster.objects.get(alias="east").outgoing_mirrors.exists()


def test_an_application_of_an_old_generation_that_does_not_exit_is_killed_after_the_grace(world):
    from datetime import timedelta

    from django.utils import timezone

    from mirrors.services.mirrors import update_mirror
    from mirrors.services.reconcile import GENERATION_GRACE

    engine, redis, mirror = world
    passes(engine, redis)
    old = Deployment.objects.get(mirror_name="m").application_id
    update_mirror(mirror, topics="orders")  # a new generation: the running driver should exit
    passes(engine, redis)
    assert list(engine.apps) == [old] and engine.killed == [], "killed before it could exit by itself"
    Mirror.objects.filter(name="m").update(updated_at=timezone.now() - GENERATION_GRACE - timedelta(seconds=1))
    passes(engine, redis)
    assert engine.killed == [old]
    passes(engine, redis)
    deployment = Deployment.objects.get(mirror_name="m")
    assert len(engine.submitted) == 2 and deployment.generation == 2 and deployment.restarts == 0


def test_an_application_whose_mirror_and_deployment_are_gone_is_stopped(world):
    """A database restored from a backup, or emptied: the engine still lists the application by its tags."""
    engine, redis, mirror = world
    passes(engine, redis)
    app_id = Deployment.objects.get(mirror_name="m").application_id
    Deployment.objects.all().delete()
    mirror.delete()
    passes(engine, redis)
    assert engine.killed == [app_id] and engine.apps == {}


def test_a_queued_application_is_not_stuck_and_the_stale_time_counts_from_its_drivers_launch(world, settings):
    """YARN accepted the application but has not launched its driver (no container free): its silence is
    the cluster's queue, not a stuck driver. Once launched, the driver has the stale time from then."""
    engine, redis, mirror = world
    settings.APP_STALE_SECONDS = 60
    passes(engine, redis)
    app_id = engine.submitted[0]
    long_ago = timezone.now() - timedelta(seconds=300)
    Deployment.objects.filter(mirror_name="m").update(submitted_at=long_ago)
    engine.apps[app_id] = replace(engine.apps[app_id], state="ACCEPTED", queued=True)
    passes(engine, redis)
    assert Deployment.objects.get(mirror_name="m").state == "starting", "queued for 300 s: not stuck"
    launched = time.time() - 30
    engine.apps[app_id] = replace(engine.apps[app_id], state="RUNNING", queued=False, launched_at=launched)
    passes(engine, redis)
    assert Deployment.objects.get(mirror_name="m").state == "starting", "launched 30 s ago: not stuck yet"
    engine.apps[app_id] = replace(engine.apps[app_id], launched_at=time.time() - 61)
    passes(engine, redis)
    deployment = Deployment.objects.get(mirror_name="m")
    assert "no status report for 60s" in deployment.last_error
    assert app_id in engine.killed and engine.submitted == [app_id]
