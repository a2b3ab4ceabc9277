"""MirrorApplication.step against a dict-backed fake Redis and fake connectors (no Spark, no Kafka)."""

import json
import os

import pytest
import redis

from mirrorcore import channel, series
from mirrorcore.channel import FAILED, PAUSED, RUNNING, STOPPED, UNASSIGNED, ConnectorDesired, Desired
from mirrorcore.config import MirrorConfig
from spark_runtime.app import MirrorApplication
from spark_runtime.connectors.base import Connector
from spark_runtime.samples import Sampler
from tests import fakes

MIRROR = "east-to-west"


class FakeRedis(fakes.FakeRedis):
    """Strings with their time-to-live, and streams (the series)."""

    def __init__(self) -> None:
        super().__init__()
        self.expiry: dict[str, int | None] = {}

    def set(self, key: str, value: str, ex: int | None = None) -> None:
        super().set(key, value, ex)
        self.expiry[key] = ex


class BrokenRedis(FakeRedis):
    def get(self, key: str):
        raise redis.ConnectionError("connection refused")

    def set(self, key: str, value: str, ex: int | None = None) -> None:
        raise redis.ConnectionError("connection refused")

    def xadd(self, *args, **kwargs) -> None:
        raise redis.ConnectionError("connection refused")


class FakeConnector(Connector):
    def __init__(self, kind: str, fail_start: bool = False) -> None:
        super().__init__()
        self.kind = kind
        self.fail_start = fail_start
        self.calls: list[str] = []

    def _start(self) -> None:
        self.calls.append("start")
        if self.fail_start:
            raise RuntimeError(f"{self.kind} cannot start")

    def _halt(self) -> None:
        self.calls.append("halt")

    def _tick(self) -> None:
        self.calls.append("tick")


def make_config(generation: int = 2) -> MirrorConfig:
    return MirrorConfig.from_dict({
        "name": MIRROR,
        "generation": generation,
        "source": {"alias": "east", "bootstrap_servers": "e:9092"},
        "target": {"alias": "west", "bootstrap_servers": "w:9092"},
        "work_dir": "/nonexistent/work",
        "redis_url": "redis://unused",
    })


def make_app(client=None, **connector_kwargs) -> tuple[MirrorApplication, FakeRedis, dict[str, FakeConnector]]:
    client = client if client is not None else FakeRedis()
    connectors = {
        "source": FakeConnector("source", **connector_kwargs),
        "heartbeat": FakeConnector("heartbeat"),
    }
    return MirrorApplication(make_config(), None, client, connectors), client, connectors


def write_desired(client: FakeRedis, generation: int = 2, **states: str) -> None:
    desired = Desired(generation, {kind: ConnectorDesired(state) for kind, state in states.items()})
    channel.publish_desired(client, MIRROR, desired)


def status_of(client: FakeRedis) -> dict:
    return json.loads(client.data[channel.status_key(MIRROR)])


def test_step_applies_the_desired_state_ticks_and_keeps_going():
    app, client, connectors = make_app()
    write_desired(client, source="running", heartbeat="paused")
    app.step()
    assert not app.stopping
    assert app.exit_reason == ""
    assert connectors["source"].state == RUNNING
    assert connectors["source"].calls == ["start", "tick"]
    assert connectors["heartbeat"].state == PAUSED
    assert connectors["heartbeat"].calls == []


def test_step_publishes_status_json_with_a_ttl():
    app, client, _ = make_app()
    write_desired(client, source="running", heartbeat="paused")
    app.step()
    key = channel.status_key(MIRROR)
    assert key == f"mirrorplane:mirror:{MIRROR}:status"
    assert client.expiry[key] == channel.STATUS_TTL_SECONDS
    status = status_of(client)
    assert status["mirror"] == MIRROR
    assert status["generation"] == 2
    assert status["pid"] == os.getpid()
    assert status["exiting"] is None
    assert status["started_at"] == app.started_at
    assert isinstance(status["reported_at"], float)
    assert status["connectors"] == {
        "source": {"state": RUNNING, "error": None, "tasks": [{"id": 0, "state": RUNNING}], "restart": 0},
        "heartbeat": {"state": PAUSED, "error": None, "tasks": [{"id": 0, "state": PAUSED}], "restart": 0},
    }
    assert channel.read_status(client, MIRROR) == status


def test_failed_connector_is_reported_with_its_error():
    app, client, _ = make_app(fail_start=True)
    write_desired(client, source="running", heartbeat="running")
    app.step()
    assert not app.stopping
    source = status_of(client)["connectors"]["source"]
    assert source["state"] == FAILED
    assert source["error"] == "source cannot start"
    assert status_of(client)["connectors"]["heartbeat"]["state"] == RUNNING


def test_missing_desired_key_runs_every_connector_by_default():
    app, client, connectors = make_app()
    app.step()
    assert not app.stopping
    assert all(c.state == RUNNING for c in connectors.values())
    assert channel.status_key(MIRROR) in client.data


def test_missing_desired_key_keeps_the_last_desired_state():
    app, client, connectors = make_app()
    write_desired(client, source="paused", heartbeat="running")
    app.step()
    del client.data[channel.desired_key(MIRROR)]
    app.step()
    app.step()
    assert not app.stopping
    assert connectors["source"].state == PAUSED
    assert connectors["source"].calls == []
    assert connectors["heartbeat"].state == RUNNING
    assert app.desired.connectors["source"].state == "paused"


def test_unreadable_redis_keeps_the_last_desired_state_and_survives():
    app, client, connectors = make_app()
    write_desired(client, source="paused", heartbeat="running")
    app.step()
    broken = BrokenRedis()
    app.redis = broken
    app.step()
    assert not app.stopping
    assert connectors["source"].state == PAUSED
    assert connectors["heartbeat"].state == RUNNING


@pytest.mark.parametrize("generation", [1, 3])
def test_exits_when_the_desired_generation_differs(generation):
    app, client, connectors = make_app()
    write_desired(client, generation=generation, source="running", heartbeat="running")
    app.step()
    assert app.stopping
    assert str(generation) in app.exit_reason
    assert "generation" in app.exit_reason
    # nothing is applied from a configuration meant for another generation
    assert all(c.state == UNASSIGNED and c.calls == [] for c in connectors.values())


def test_exits_when_every_connector_is_desired_stopped():
    app, client, _ = make_app()
    write_desired(client, source="running", heartbeat="running")
    app.step()
    assert not app.stopping
    write_desired(client, source="stopped", heartbeat="stopped")
    app.step()
    assert app.stopping
    assert app.exit_reason == "every connector is stopped"


def test_does_not_exit_while_one_connector_is_not_stopped():
    app, client, connectors = make_app()
    write_desired(client, source="stopped", heartbeat="paused")
    app.step()
    assert not app.stopping
    assert connectors["source"].state == STOPPED
    assert connectors["heartbeat"].state == PAUSED


def test_report_after_stopping_names_the_exit_reason():
    app, client, _ = make_app()
    write_desired(client, generation=5, source="running", heartbeat="running")
    app.step()
    app.report()
    assert "5" in status_of(client)["exiting"]


def test_status_publish_failure_is_not_fatal():
    app, _, connectors = make_app(client=BrokenRedis())
    app.step()
    assert not app.stopping
    assert all(c.state == RUNNING for c in connectors.values())


class CountingConnector(FakeConnector):
    """A source connector with cumulative counters, as SourceConnector reports them."""

    def __init__(self) -> None:
        super().__init__("source")
        self.records = 0

    def status(self) -> dict:
        return super().status() | {"metrics": {"records": self.records, "bytes": self.records * 10}}


def test_the_loop_records_tasks_and_throughput_every_couple_of_seconds(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("spark_runtime.app.time.time", lambda: clock[0])
    client = FakeRedis()
    source = CountingConnector()
    app = MirrorApplication(make_config(), None, client, {"source": source, "heartbeat": FakeConnector("heartbeat")},
                            sampler=Sampler(interval=2.0))
    write_desired(client, source="running", heartbeat="paused")
    for records in (0, 100, 200, 300, 400):  # a step every second
        source.records = records
        app.step()
        clock[0] += 1.0
    tasks = series.read(client, MIRROR, "tasks")
    assert [p["at"] for p in tasks] == [1000.0, 1002.0, 1004.0]
    assert tasks[0] | {"at": 0} == {"at": 0, "RUNNING": 1, "PAUSED": 1}
    throughput = series.read(client, MIRROR, "throughput")
    assert [(p["at"], p["records_per_s"], p["bytes_per_s"], p["records"]) for p in throughput] == [
        (1002.0, 100.0, 1000.0, 200), (1004.0, 100.0, 1000.0, 400)]


def test_series_not_recorded_while_redis_is_away_do_not_stop_the_loop():
    app, _, connectors = make_app(client=BrokenRedis())
    app.step()
    app.step()
    assert not app.stopping
    assert all(c.state == RUNNING for c in connectors.values())


def test_a_configuration_the_override_policy_refuses_fails_every_connector_without_starting_spark(tmp_path):
    from spark_runtime.app import RefusedSession, build

    path = tmp_path / "app.json"
    path.write_text(json.dumps({
        "name": MIRROR, "generation": 2, "work_dir": str(tmp_path), "redis_url": "redis://127.0.0.1:1/0",
        "source": {"alias": "east", "bootstrap_servers": "e:9092", "config": {"metric.reporters": "x.Evil"}},
        "target": {"alias": "west", "bootstrap_servers": "w:9092"},
        "connectors": {"source": {"config": {"consumer.interceptor.classes": "x.Evil"}}},
        "spark_conf": {"spark.driver.extraJavaOptions": "-XX:OnOutOfMemoryError=id"},
        "overrides": {"spark_conf": "allowlist", "client_config": "allowlist"}}))
    app = build(str(path))
    assert isinstance(app.spark, RefusedSession) and app.lag is None
    app.redis = client = FakeRedis()
    app.step()
    connectors = status_of(client)["connectors"]
    assert set(connectors) == {"heartbeat", "source", "checkpoint"}
    for status in connectors.values():
        assert status["state"] == FAILED
        assert status["error"].startswith("refused by this installation's override policy: ")
        for key in ("spark.driver.extraJavaOptions", "clusters.east.config: metric.reporters",
                    "connectors.source.config: consumer.interceptor.classes"):
            assert key in status["error"]
    app.spark.stop()


def test_local_checkpoints_are_told_from_cluster_ones():
    from spark_runtime.app import is_local_path

    assert is_local_path("/var/lib/mirrorplane/checkpoints") and is_local_path("file:///tmp/checkpoints")
    assert is_local_path("var/checkpoints")
    assert not is_local_path("hdfs://namenode:9000/mirrorplane/checkpoints")
