"""`POST /api/v1/mirrors/{name}/failover/` and `/failback/`: refusals change nothing; the flow with a Kafka double."""

from __future__ import annotations

import pytest

from mirrorcore.admin import ClusterError
from mirrorcore.formats import OffsetSync
from mirrors.models import Cluster, Connector, Deployment, Event, Failover, Mirror
from mirrors.services import failover as failover_service
from mirrors.services.failover_plan import SyncIndex
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db


class FakeClusters:
    """GroupClusters in memory: committed offsets and members per (cluster, group), syncs per mirror."""

    def __init__(self) -> None:
        self.offsets: dict[tuple[str, str], dict] = {}
        self.members: dict[tuple[str, str], int] = {}
        self.flows: dict[str, list[OffsetSync]] = {}
        self.partitions: dict[tuple[str, str], int] = {}
        self.commits: list[tuple[str, str, dict]] = []
        self.down: set[str] = set()

    def _up(self, cluster) -> None:
        if cluster.alias in self.down:
            raise ClusterError(f"cluster {cluster.alias!r}: no answer (test)")

    def group_names(self, cluster) -> list[str]:
        self._up(cluster)
        return sorted({g for (alias, g) in self.offsets if alias == cluster.alias})

    def committed(self, cluster, group) -> dict:
        self._up(cluster)
        return dict(self.offsets.get((cluster.alias, group), {}))

    def activity(self, cluster, group) -> tuple[bool, str]:
        self._up(cluster)
        members = self.members.get((cluster.alias, group), 0)
        return members == 0, f"group {group!r} is active on {cluster.alias} ({members} members, STABLE)"

    def partition_counts(self, cluster, topics) -> dict:
        return {t: self.partitions.get((cluster.alias, t), 1) for t in topics}

    def commit(self, cluster, group, plan) -> None:
        self._up(cluster)
        self.commits.append((cluster.alias, group, plan))
        self.offsets.setdefault((cluster.alias, group), {}).update(plan)

    def syncs(self, mirror) -> SyncIndex:
        return SyncIndex.of(self.flows.get(mirror.name, []))


@pytest.fixture
def kafka(monkeypatch) -> FakeClusters:
    fake = FakeClusters()
    monkeypatch.setattr(failover_service, "GroupClusters", lambda *a, **k: fake)
    from mirrors.services import failback
    monkeypatch.setattr(failback, "GroupClusters", lambda *a, **k: fake)
    return fake


@pytest.fixture
def mirror(db) -> Mirror:
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m", source=east, target=west, topics="orders")


@pytest.fixture
def operator(api_as):
    return api_as("operator")


def unchanged(mirror: Mirror) -> None:
    """Nothing stored, stopped or created by a refused verb."""
    assert not Failover.objects.exists()
    assert set(Connector.objects.filter(mirror=mirror).values_list("desired_state", flat=True)) == {"running"}
    assert list(Mirror.objects.values_list("name", flat=True)) == [mirror.name]
    assert not Event.objects.filter(action__in=["failover", "failback", "stop", "create"]).exists()


def test_unknown_mirror_is_a_404_naming_it(operator, kafka):
    for verb in ("failover", "failback"):
        response = operator.post(f"/api/v1/mirrors/nope/{verb}/?force=true")
        assert response.status_code == 404 and response.json() == {"detail": "no mirror 'nope'"}


def test_viewers_may_not_fail_over(api_as, mirror, kafka):
    response = api_as("viewer").post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 403 and "operator role" in response.json()["detail"]
    unchanged(mirror)


@pytest.mark.parametrize(("given", "field"), [({"timeout": "0"}, "timeout"), ({"timeout": "soon"}, "timeout"),
                                              ({"force": "maybe"}, "force"), ({"idle_seconds": "0"}, "idle_seconds")])
def test_bad_parameters_are_400_naming_them(operator, mirror, kafka, given, field):
    response = operator.post("/api/v1/mirrors/m/failover/", given, format="json")
    assert response.status_code == 400 and list(response.json()) == [field], response.json()
    unchanged(mirror)


def test_paused_mirror_is_refused(operator, mirror, kafka):
    Connector.objects.filter(mirror=mirror, kind="source").update(desired_state="paused")
    response = operator.post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 409 and "is paused" in response.json()["mirror"][0]
    assert not Failover.objects.exists() and not Event.objects.filter(action="failover").exists()
    assert Connector.objects.get(mirror=mirror, kind="source").desired_state == "paused"


def test_failed_mirror_is_refused(operator, mirror, kafka):
    Deployment.objects.create(mirror_name="m", state="failed", generation=1)
    response = operator.post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 409 and "has failed" in response.json()["mirror"][0]
    unchanged(mirror)


def test_not_drained_within_the_timeout_changes_nothing(operator, mirror, kafka, monkeypatch):
    monkeypatch.setattr(failover_service, "readiness", lambda *a, **k: {"drained": False, "summary": "Not drained: x."})
    monkeypatch.setattr(failover_service, "POLL_SECONDS", 0.05)
    response = operator.post("/api/v1/mirrors/m/failover/", {"timeout": 1, "idle_seconds": 5}, format="json")
    assert response.status_code == 409
    [reason] = response.json()["timeout"]
    assert "not drained within 1 s" in reason and "Not drained: x." in reason
    unchanged(mirror)


def test_unreachable_source_changes_nothing(operator, mirror, kafka):
    kafka.down.add("east")
    response = operator.post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 503 and "nothing changed" in response.json()["detail"]
    unchanged(mirror)


def test_failback_before_failover_is_refused(operator, mirror, kafka):
    response = operator.post("/api/v1/mirrors/m/failback/")
    assert response.status_code == 409 and "has not failed over" in response.json()["failover"][0]
    unchanged(mirror)


@pytest.mark.parametrize("policy", ["identity", "legacy"])
def test_failback_that_would_loop_is_refused(operator, mirror, kafka, policy):
    Mirror.objects.filter(pk=mirror.pk).update(replication_policy=policy)
    Failover.objects.create(mirror=mirror, actor="olga")
    response = operator.post("/api/v1/mirrors/m/failback/")
    assert response.status_code == 409 and "loop" in response.json()["replication_policy"][0]
    assert list(Mirror.objects.values_list("name", flat=True)) == ["m"]
    assert Failover.objects.get().phase == "failed_over" and not Event.objects.exists()


def test_failback_refuses_a_foreign_mirror_of_the_reverse_name(operator, mirror, kafka):
    Failover.objects.create(mirror=mirror, actor="olga")
    north = Cluster.objects.create(alias="north", bootstrap_servers="north:9092")
    create_mirror(name="m-failback", source=north, target=mirror.source, topics="x")
    response = operator.post("/api/v1/mirrors/m/failback/")
    assert response.status_code == 409 and "is not west -> east" in response.json()["reverse_mirror"][0]
    assert Failover.objects.get().phase == "failed_over"


def test_failover_then_failback_with_a_pending_group(operator, mirror, kafka):
    kafka.flows["m"] = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 100, 100)]
    kafka.offsets[("east", "billing")] = {("orders", 0): 150, ("other", 0): 9}
    kafka.offsets[("east", "audit")] = {("orders", 0): 100}
    kafka.members[("west", "audit")] = 2  # already consuming on the target: its offsets wait

    response = operator.post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["phase"] == "failed_over" and body["forced"] is True and body["source_connector"] == "stopped"
    assert body["pending"] == ["audit"]
    [audit, billing] = body["groups"]
    assert (audit["status"], billing["status"]) == ("pending", "synced")
    assert billing["offsets"] == [{"topic": "orders", "partition": 0, "to_topic": "east.orders",
                                   "committed_offset": 150, "offset": 101, "reprocess": 49, "note": None}]
    assert kafka.offsets[("west", "billing")] == {("east.orders", 0): 101}
    assert Connector.objects.get(mirror=mirror, kind="source").desired_state == "stopped"
    assert Event.objects.filter(action="failover", actor="user-operator", mirror="m").exists()

    assert operator.post("/api/v1/mirrors/m/failover/?force=true").status_code == 409, "failed over already"

    kafka.members[("west", "audit")] = 0  # its members left: the beat task finishes it
    assert failover_service.finish_pending() == 1
    assert kafka.offsets[("west", "audit")] == {("east.orders", 0): 100}
    assert operator.get("/api/v1/mirrors/m/failover/").json()["pending"] == []
    assert Event.objects.filter(action="failover-sync", actor="supervisor", mirror="m").count() == 1

    # Consumers read on the target, and producers wrote `orders` there; then the failback.
    kafka.offsets[("west", "billing")] = {("east.orders", 0): 120, ("orders", 0): 30}
    response = operator.post("/api/v1/mirrors/m/failback/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reverse_mirror"] | {"application": None} == {
        "name": "m-failback", "exists": True, "source": "west", "target": "east", "created": True, "application": None,
        "connectors": {"checkpoint": "running", "heartbeat": "running", "source": "running"},
        "url": "/mirrors/m-failback/"}
    reverse = Mirror.objects.get(name="m-failback")
    assert (reverse.source.alias, reverse.target.alias, reverse.topics) == ("west", "east", "orders")
    assert body["phase"] == "failed_back" and sorted(body["pending_back"]) == ["billing"]
    [billing_back] = [g for g in body["groups"] if g["direction"] == "back" and g["group"] == "billing"]
    assert billing_back["offsets"][0] == {"topic": "east.orders", "partition": 0, "to_topic": "orders",
                                          "committed_offset": 120, "offset": 101, "reprocess": 19, "note": None}
    assert "has copied orders-0 up to nothing of 30" in billing_back["offsets"][1]["note"]
    assert kafka.offsets[("east", "billing")][("orders", 0)] == 150, "never moved back behind the group's own"

    kafka.flows["m-failback"] = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 29, 29)]
    assert failover_service.finish_pending() == 1
    assert kafka.offsets[("east", "billing")][("west.orders", 0)] == 30
    state = operator.get("/api/v1/mirrors/m/failover/").json()
    assert state["pending_back"] == [] and state["reverse_mirror"]["name"] == "m-failback"

    # A second failback resumes the reverse mirror rather than creating another.
    Connector.objects.filter(mirror=reverse).update(desired_state="paused")
    response = operator.post("/api/v1/mirrors/m/failback/")
    assert response.status_code == 200 and response.json()["reverse_mirror"]["created"] is False
    assert set(Connector.objects.filter(mirror=reverse).values_list("desired_state", flat=True)) == {"running"}
    assert Mirror.objects.count() == 2

    # After the cycle the forward mirror's source connector is stopped: no second failover until it runs.
    response = operator.post("/api/v1/mirrors/m/failover/?force=true")
    assert response.status_code == 409 and "has failed back" in response.json()["mirror"][0]
