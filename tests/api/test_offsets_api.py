"""`/offsets/translate/` and `/clusters/{alias}/replication/`: validation, policy choice, shapes; Kafka faked."""

from __future__ import annotations

import pytest

from mirrorcore import remote_cluster
from mirrorcore.admin import ClusterError
from mirrorcore.policy import ReplicationPolicy
from mirrors.models import Cluster, Connector
from mirrors.services import offsets
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db


@pytest.fixture
def clusters(db):
    return {alias: Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092")
            for alias in ("east", "west", "north")}


@pytest.fixture
def translated(monkeypatch):
    """Records each translate_offsets call; answers with `result` (or raises it)."""
    calls = []
    state = {"result": {("east.orders", 1): 7, ("east.orders", 0): 12, ("east.audit", 0): 3}}

    def fake(connection, policy, source_alias, group, timeout):
        calls.append({"target": connection.alias, "policy": policy, "source": source_alias, "group": group,
                      "timeout": timeout})
        if isinstance(state["result"], Exception):
            raise state["result"]
        return state["result"]

    monkeypatch.setattr(remote_cluster, "translate_offsets", fake)
    return calls, state


class FakeAdmin:
    topics: dict | Exception = {}

    def __init__(self, connection, timeout):
        self.connection, self.timeout = connection, timeout

    def topic_partitions(self):
        if isinstance(self.topics, Exception):
            raise self.topics
        return self.topics


@pytest.fixture
def admin(monkeypatch):
    monkeypatch.setattr(offsets, "KafkaAdmin", FakeAdmin)
    FakeAdmin.topics = {}
    return FakeAdmin


def translate(api, **params):
    return api.get("/api/v1/offsets/translate/", {"group": "g", "source": "east", "target": "west"} | params)


# -- translate -----------------------------------------------------------------------------

def test_translate_returns_sorted_offsets_and_the_topic_it_read(api, clusters, translated):
    calls, _ = translated
    response = translate(api)
    assert response.status_code == 200
    assert response.json() == {
        "group": "g", "source": "east", "target": "west", "checkpoints_topic": "east.checkpoints.internal",
        "offsets": [{"topic": "east.audit", "partition": 0, "offset": 3},
                    {"topic": "east.orders", "partition": 0, "offset": 12},
                    {"topic": "east.orders", "partition": 1, "offset": 7}]}
    assert calls == [{"target": "west", "policy": ReplicationPolicy(), "source": "east", "group": "g",
                      "timeout": 9}]


def test_translate_uses_the_policy_of_the_mirror_of_that_flow(api, clusters, translated):
    calls, _ = translated
    create_mirror(name="other", source=clusters["north"], target=clusters["west"], separator="__")
    mirror = create_mirror(name="m", source=clusters["east"], target=clusters["west"], separator="--",
                           replication_policy="identity")
    Connector.objects.filter(mirror=mirror, kind="source").update(
        config={"replication.policy.internal.topic.separator.enabled": "false"})
    body = translate(api, timeout="2.5").json()
    assert calls[0]["policy"] == ReplicationPolicy("identity", "--", False)
    assert calls[0]["timeout"] == 2.5
    assert body["checkpoints_topic"] == "east.checkpoints.internal"
    Connector.objects.filter(mirror=mirror, kind="source").update(config={})
    assert translate(api).json()["checkpoints_topic"] == "east--checkpoints--internal"


def test_translate_policy_can_be_given(api, clusters, translated):
    calls, _ = translated
    create_mirror(name="m", source=clusters["east"], target=clusters["west"], separator="--")
    body = translate(api, separator="_", replication_policy="identity").json()
    assert calls[0]["policy"] == ReplicationPolicy("identity", "_")
    assert body["checkpoints_topic"] == "east_checkpoints_internal"


def test_no_checkpoints_is_an_empty_list(api, clusters, translated):
    translated[1]["result"] = {}
    assert translate(api).json()["offsets"] == []


@pytest.mark.parametrize(("params", "field", "reason"), [
    ({"group": None}, "group", "required"),
    ({"group": ""}, "group", "may not be blank"),
    ({"source": None}, "source", "required"),
    ({"source": "nowhere"}, "source", "unknown cluster alias 'nowhere'"),
    ({"target": "nowhere"}, "target", "unknown cluster alias 'nowhere'"),
    ({"target": "east"}, "target", "source and target must be different clusters"),
    ({"timeout": "soon"}, "timeout", "valid number"),
    ({"timeout": "0"}, "timeout", "greater than or equal to 0.5"),
    ({"timeout": "600"}, "timeout", "less than or equal to 60"),
    ({"replication_policy": "mm1"}, "replication_policy", "not a valid choice"),
    ({"separator": " "}, "separator", "blank"),
])
def test_bad_translate_queries_are_400s_naming_the_field(api, clusters, translated, params, field, reason):
    query = {k: v for k, v in ({"group": "g", "source": "east", "target": "west"} | params).items() if v is not None}
    response = api.get("/api/v1/offsets/translate/", query)
    assert response.status_code == 400
    assert reason in response.json()[field][0]
    assert translated[0] == []


def test_an_unreachable_target_is_503_with_the_reason(api, clusters, translated):
    translated[1]["result"] = ClusterError("cluster 'west' (west:9092): _TRANSPORT: Connection refused")
    response = translate(api)
    assert response.status_code == 503
    assert response.json() == {"detail": "cluster 'west' (west:9092): _TRANSPORT: Connection refused"}


def test_translate_needs_authentication(client, clusters, translated):
    assert client.get("/api/v1/offsets/translate/?group=g&source=east&target=west").status_code == 401


# -- replication ---------------------------------------------------------------------------

def test_replication_lists_upstream_clusters_and_hops(api, clusters, admin):
    admin.topics = {"heartbeats": 1, "east.heartbeats": 1, "north.east.heartbeats": 1, "east.orders": 3}
    body = api.get("/api/v1/clusters/west/replication/").json()
    assert body == {"cluster": "west", "upstream_clusters": ["east", "north"], "hops": {"east": 1, "north": 1},
                    "heartbeat_topics": ["east.heartbeats", "heartbeats", "north.east.heartbeats"]}
    body = api.get("/api/v1/clusters/west/replication/?source=south").json()
    assert body["hops"] == {"east": 1, "north": 1, "south": -1}


def test_replication_uses_the_policy_of_mirrors_into_the_cluster(api, clusters, admin):
    create_mirror(name="m", source=clusters["east"], target=clusters["west"], separator="_")
    admin.topics = {"east_heartbeats": 1, "north_east_heartbeats": 1, "x.heartbeats": 1}
    body = api.get("/api/v1/clusters/west/replication/?source=east").json()
    assert body["upstream_clusters"] == ["east", "north"] and body["hops"] == {"east": 1, "north": 1}


def test_replication_of_an_unreachable_cluster_is_503(api, clusters, admin):
    admin.topics = ClusterError("cluster 'west' (west:9092): no answer within 9s")
    response = api.get("/api/v1/clusters/west/replication/")
    assert response.status_code == 503 and "no answer" in response.json()["detail"]


def test_replication_of_an_unknown_cluster_is_404(api, clusters, admin):
    assert api.get("/api/v1/clusters/nowhere/replication/").status_code == 404


@pytest.mark.parametrize(("query", "field"), [("timeout=-1", "timeout"), (f"source={'x' * 300}", "source")])
def test_bad_replication_queries_are_400s(api, clusters, admin, query, field):
    response = api.get(f"/api/v1/clusters/west/replication/?{query}")
    assert response.status_code == 400 and field in response.json()


def test_schema_still_builds(api):
    response = api.get("/api/v1/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/v1/offsets/translate/", "/api/v1/clusters/{alias}/replication/",
                 "/api/v1/mirrors/{name}/metrics/"):
        assert path in text
