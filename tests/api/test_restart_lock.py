"""A restart and a failover read the application's live status from Redis (which may take seconds when
Redis is slow) without holding a row lock: other requests on the mirror are not kept waiting."""

from __future__ import annotations

import pytest
from django.db import connection

from mirrorcore import channel
from mirrors.models import Cluster, Connector
from mirrors.services import failover, lifecycle, observed
from mirrors.services.mirrors import create_mirror
from tests.api.test_failover_api import FakeClusters
from tests.fakes import FakeRedis

# Outside a test transaction, so that `in_atomic_block` tells whether the restart holds its lock.
pytestmark = pytest.mark.django_db(transaction=True)


class LockWatchingRedis(FakeRedis):
    """Records, for every read of a key, whether a transaction (and so the row lock) was open."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, bool]] = []

    def get(self, key):
        self.reads.append((key, connection.in_atomic_block))
        return super().get(key)


@pytest.fixture
def fake(monkeypatch) -> LockWatchingRedis:
    fake = LockWatchingRedis()
    for module in (observed, lifecycle):
        monkeypatch.setattr(module, "get_redis", lambda: fake)
    return fake


@pytest.fixture
def connector() -> Connector:
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m", source=east, target=west)
    return mirror.connectors.get(kind="source")


def test_restart_reads_the_live_status_outside_the_row_lock(fake, connector):
    result = lifecycle.restart(connector, "admin")
    status_reads = [in_lock for key, in_lock in fake.reads if key == channel.status_key("m")]
    assert status_reads, "the restart reads the live status"
    assert not any(status_reads), "the live status was read while the connector's row was locked"
    assert result.accepted and Connector.objects.get(pk=connector.pk).restart_token == 1


def test_only_failed_still_sees_a_failure_the_application_reports(fake, connector):
    fake.set(channel.status_key("m"), channel_status_with_failed_source())
    assert lifecycle.restart(connector, "admin", only_failed=True).accepted
    assert not any(in_lock for _, in_lock in fake.reads)


def test_failover_checks_the_live_status_outside_the_row_lock(fake, connector):
    failover.failover(connector.mirror, "admin", force=True, kafka=FakeClusters(), sleep=lambda _: None)
    status_reads = [in_lock for key, in_lock in fake.reads if key == channel.status_key("m")]
    assert status_reads, "the failover reads the live status"
    assert not any(status_reads), "the live status was read while the mirror's row was locked"
    assert Connector.objects.get(pk=connector.pk).desired_state == "stopped"


def channel_status_with_failed_source() -> str:
    import json

    return json.dumps({"generation": 1, "connectors": {"source": {"state": "FAILED", "restart": 0, "tasks": []}}})
