"""Mirror endpoints: validation with the field named, defaults, generations. No broker needed."""

import pytest

from mirrors.models import Mirror

pytestmark = pytest.mark.django_db


@pytest.fixture
def clusters(api):
    for alias in ("east", "west"):
        assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"},
                        format="json").status_code == 201


def post_mirror(api, **fields):
    return api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west", **fields}, format="json")


def test_mirror_defaults_follow_mm2(api, clusters):
    response = post_mirror(api)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["topics"] == ".*" and body["groups"] == ".*"
    assert "__.*" in body["topics_exclude"]
    assert body["replication_policy"] == "default" and body["separator"] == "."
    assert set(body["connectors"]) == {"source", "checkpoint", "heartbeat"}
    assert body["connectors"]["source"] == {
        "tasks_max": 1, "state": "running", "auto_restart": {"enabled": True, "max_restarts": None}, "config": {},
    }


def test_unknown_cluster_alias_is_rejected(api, clusters):
    response = post_mirror(api, source="nowhere")
    assert response.status_code == 400
    assert "unknown cluster alias 'nowhere'" in response.json()["source"][0]
    assert not Mirror.objects.exists()


@pytest.mark.parametrize("field", ["topics", "topics_exclude", "groups", "groups_exclude"])
def test_invalid_regex_is_rejected(api, clusters, field):
    response = post_mirror(api, **{field: "orders, pay(ments"})
    assert response.status_code == 400
    assert "pay(ments" in response.json()[field][0]
    assert not Mirror.objects.exists()


def test_source_and_target_must_differ(api, clusters):
    response = post_mirror(api, target="east")
    assert response.status_code == 400 and "target" in response.json()


def test_two_aliases_of_one_cluster_are_refused_by_their_shared_address(api, clusters):
    assert api.post("/api/v1/clusters/", {"alias": "east-again", "bootstrap_servers": "other:9092, EAST:9092"},
                    format="json").status_code == 201
    response = post_mirror(api, target="east-again")
    assert response.status_code == 400, response.content
    reason = response.json()["target"][0]
    assert "'east' and 'east-again' share the bootstrap address east:9092" in reason
    assert "one Kafka cluster: a mirror into its own source cluster would copy what it writes again" in reason
    assert not Mirror.objects.exists()


def test_a_cluster_cannot_move_onto_the_address_of_a_cluster_it_is_mirrored_with(api, clusters):
    assert post_mirror(api).status_code == 201
    response = api.patch("/api/v1/clusters/west/", {"bootstrap_servers": "west-2:9092,east:9092"}, format="json")
    assert response.status_code == 400, response.content
    reason = response.json()["bootstrap_servers"][0]
    assert reason.startswith("mirror 'm1': 'east' and 'west' share the bootstrap address east:9092"), reason
    assert api.patch("/api/v1/clusters/west/", {"bootstrap_servers": "west-2:9092"},
                     format="json").status_code == 200


@pytest.mark.parametrize(("connectors", "field"), [
    ({"mirror": {}}, None),
    ({"source": {"tasks_max": 0}}, "tasks_max"),
    ({"source": {"state": "sleeping"}}, "state"),
    ({"heartbeat": {"auto_restart": {"max_restarts": -1}}}, "auto_restart"),
    ({"source": {"config": {"nested": {"a": 1}}}}, "config"),
])
def test_bad_connector_specs_are_rejected(api, clusters, connectors, field):
    response = post_mirror(api, connectors=connectors)
    assert response.status_code == 400
    errors = response.json()["connectors"]
    if field:
        assert field in next(iter(errors.values()))
    assert not Mirror.objects.exists()


def test_malformed_body_is_a_400_not_a_500(api, clusters):
    response = api.post("/api/v1/mirrors/", "{not json", content_type="application/json")
    assert response.status_code == 400


def test_configuration_changes_bump_the_generation_but_desired_states_do_not(api, clusters):
    post_mirror(api, topics="orders")
    response = api.patch("/api/v1/mirrors/m1/", {"connectors": {"source": {"state": "paused"}}}, format="json")
    assert response.status_code == 200
    assert response.json()["generation"] == 1
    assert response.json()["connectors"]["source"]["state"] == "paused"
    response = api.patch("/api/v1/mirrors/m1/", {"topics": "orders, payments"}, format="json")
    assert response.json()["generation"] == 2
    response = api.patch("/api/v1/mirrors/m1/", {"connectors": {"source": {"config": {"batch.max.records": 10}}}},
                         format="json")
    assert response.json()["generation"] == 3
    assert response.json()["connectors"]["source"]["config"] == {"batch.max.records": "10"}


def test_mirror_cannot_be_renamed(api, clusters):
    post_mirror(api)
    response = api.patch("/api/v1/mirrors/m1/", {"name": "m2"}, format="json")
    assert response.status_code == 400 and "name" in response.json()


def test_status_of_a_new_mirror(api, clusters, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens: live progress is simply absent
    from mirrors.services.redis_client import get_redis

    get_redis.cache_clear()
    post_mirror(api)
    body = api.get("/api/v1/mirrors/m1/status/").json()
    get_redis.cache_clear()
    assert body["application"]["state"] == "not_running"
    assert body["progress"] is None
    assert {kind: c["state"] for kind, c in body["connectors"].items()} == {
        "source": "UNASSIGNED", "checkpoint": "UNASSIGNED", "heartbeat": "UNASSIGNED"}


@pytest.mark.parametrize(("prop", "value", "reason"), [
    ("offset.lag.max", "many", "expected an integer"),
    ("offset-syncs.topic.location", "middle", "expected one of source, target"),
    ("refresh.topics.interval.seconds", "0", "positive"),
    ("sync.topic.configs.enabled", "yes please", "true or false"),
    ("replication.factor", "0", "-1"),
    ("config.properties.exclude", "retention(", "invalid regular expression"),
])
def test_known_mm2_properties_are_validated(api, clusters, prop, value, reason):
    response = post_mirror(api, connectors={"source": {"config": {prop: value}}})
    assert response.status_code == 400
    message = response.json()["connectors"]["source"]["config"][0]
    assert message.startswith(f"{prop}: ") and reason in message
    assert not Mirror.objects.exists()


def test_unknown_and_prefixed_properties_pass_through(api, clusters):
    config = {"producer.override.compression.type": "lz4", "consumer.fetch.min.bytes": "1", "some.mm2.thing": "x"}
    response = post_mirror(api, connectors={"source": {"config": config}})
    assert response.status_code == 201
    assert response.json()["connectors"]["source"]["config"] == config


def test_settings_held_once_per_mirror_are_refused_in_connector_config(api):
    for alias in ("east", "west"):
        api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"}, format="json")
    response = api.post("/api/v1/mirrors/", {"name": "m", "source": "east", "target": "west", "connectors": {
        "source": {"config": {"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}},
        "checkpoint": {"config": {"offset-syncs.topic.location": "target"}},
    }}, format="json")
    assert response.status_code == 400
    errors = response.json()["connectors"]
    assert "replication_policy" in errors["source"]["config"][0]
    assert "set it on the source connector" in errors["checkpoint"]["config"][0]


def test_two_mirrors_writing_the_same_remote_topics_are_refused(api):
    for alias in ("east", "west", "north"):
        api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"}, format="json")
    assert api.post("/api/v1/mirrors/", {"name": "a", "source": "east", "target": "west", "topics": "orders.*",
                                         "replication_policy": "identity"}, format="json").status_code == 201
    response = api.post("/api/v1/mirrors/", {"name": "b", "source": "north", "target": "west", "topics": "orders-eu",
                                             "replication_policy": "identity"}, format="json")
    assert response.status_code == 400
    assert "mirror 'a' (east -> west) may also write the same topic names" in response.json()["topics"][0]
    assert api.post("/api/v1/mirrors/", {"name": "c", "source": "north", "target": "west", "topics": "payments",
                                         "replication_policy": "identity"}, format="json").status_code == 201
    assert api.post("/api/v1/mirrors/", {"name": "d", "source": "east", "target": "west", "topics": "orders.*"},
                    format="json").status_code == 201, "default policy: east.orders differs from orders"
    assert api.patch("/api/v1/mirrors/c/", {"topics": ".*"}, format="json").status_code == 400
