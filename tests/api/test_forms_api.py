"""The dashboard forms' helpers: `POST /clusters/check/` (unsaved) and `POST /mirrors/preview/`."""

from __future__ import annotations

import pytest

from mirrorcore.admin import ClusterError, ClusterInfo
from mirrors.models import Cluster
from mirrors.roles import VIEWER
from mirrors.services import clusters, preview
from mirrors.services.clusters import CheckResult
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db

SOURCE_TOPICS = {"orders": 3, "payments.eu": 2, "payments.us": 2, "audit": 1, "__consumer_offsets": 50,
                 "heartbeats": 1, "west.orders": 3, "mm2-offset-syncs.west.internal": 1, "orders.replica": 1}


@pytest.fixture
def world():
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return east, west


@pytest.fixture
def topics(monkeypatch):
    """The source's topics, as the admin client would list them; `.seen` records which clusters were asked."""
    seen: list[str] = []

    def lister(cluster: Cluster) -> dict[str, int]:
        seen.append(cluster.alias)
        return dict(SOURCE_TOPICS)

    monkeypatch.setattr(preview, "list_topics", lister)
    lister.seen = seen
    return lister


def post_preview(api, **body):
    return api.post("/api/v1/mirrors/preview/", body, format="json")


# -- preview ------------------------------------------------------------------------------------

def test_preview_lists_matching_topics_with_remote_names_and_why_others_are_left_out(api, world, topics):
    response = post_preview(api, source="east", target="west", topics="orders, payments\\..*", topics_exclude="")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["source"] == "east" and body["target"] == "west"
    assert body["total"] == len(SOURCE_TOPICS)
    assert body["topics"] == [
        {"topic": "heartbeats", "remote_topic": "east.heartbeats", "partitions": 1},  # MM2: always replicated
        {"topic": "orders", "remote_topic": "east.orders", "partitions": 3},
        {"topic": "payments.eu", "remote_topic": "east.payments.eu", "partitions": 2},
        {"topic": "payments.us", "remote_topic": "east.payments.us", "partitions": 2},
    ]
    assert body["matched"] == 4 and body["truncated"] is False
    reasons = {e["topic"]: e["reason"] for e in body["excluded"]}
    assert reasons["audit"] == "not matched by topics"
    assert "internal" in reasons["__consumer_offsets"] and "internal" in reasons["mm2-offset-syncs.west.internal"]
    assert "cycle" in reasons["west.orders"] and "'west'" in reasons["west.orders"]
    assert topics.seen == ["east"]


def test_preview_names_the_exclude_pattern_and_follows_policy_and_separator(api, world, topics):
    body = post_preview(api, source="east", target="west", topics=".*", topics_exclude="audit, payments\\.u.*",
                        separator="_").json()
    reasons = {e["topic"]: e["reason"] for e in body["excluded"]}
    assert reasons["audit"] == "excluded by topics.exclude 'audit'"
    assert reasons["payments.us"] == "excluded by topics.exclude 'payments\\\\.u.*'"
    assert {t["topic"]: t["remote_topic"] for t in body["topics"]}["orders"] == "east_orders"

    identity = post_preview(api, source="east", target="west", topics="orders", replication_policy="identity").json()
    assert {t["topic"]: t["remote_topic"] for t in identity["topics"]} == {"orders": "orders",
                                                                          "heartbeats": "east.heartbeats"}


def test_preview_defaults_are_the_mirror_defaults(api, world, topics):
    """Without topics/topics_exclude, MM2's defaults: everything but internal topics and `*.replica`."""
    body = post_preview(api, source="east").json()
    assert body["target"] is None
    assert {t["topic"] for t in body["topics"]} == {"orders", "payments.eu", "payments.us", "audit", "heartbeats",
                                                    "west.orders"}  # no target: no cycle to avoid
    reasons = {e["topic"]: e["reason"] for e in body["excluded"]}
    assert reasons["orders.replica"].startswith("excluded by topics.exclude")


def test_preview_caps_its_lists_and_says_so(api, world, monkeypatch):
    names = [f"in-{i}" for i in range(300)] + [f"out-{i}" for i in range(150)]
    monkeypatch.setattr(preview, "list_topics", lambda cluster: dict.fromkeys(names, 1))
    body = post_preview(api, source="east", topics="in-.*").json()
    assert body["matched"] == 300 and body["total"] == 450
    assert len(body["topics"]) == preview.LIMIT == body["limit"] and len(body["excluded"]) == 150
    assert body["truncated"] is True


@pytest.mark.parametrize(("body", "field", "reason"), [
    ({}, "source", "required"),
    ({"source": "nope"}, "source", "unknown cluster alias 'nope'"),
    ({"source": "east", "topics": "pay(ments"}, "topics", "invalid regular expression 'pay(ments'"),
    ({"source": "east", "topics_exclude": "a, [b"}, "topics_exclude", "invalid regular expression '[b'"),
    ({"source": "east", "topics": ""}, "topics", "blank"),
    ({"source": "east", "separator": "a b"}, "separator", "without spaces"),
    ({"source": "east", "replication_policy": "mirror"}, "replication_policy", "not a valid choice"),
    ({"source": "east", "target": "east"}, "target", "different clusters"),
])
def test_preview_validation_names_the_field(api, world, topics, body, field, reason):
    response = post_preview(api, **body)
    assert response.status_code == 400, response.content
    assert reason in " ".join(response.json()[field])
    assert topics.seen == []  # nothing asked of Kafka


def test_preview_of_an_unreachable_source_is_503_with_the_reason(api, world, monkeypatch):
    def down(cluster):
        raise ClusterError("Connection refused (east:9092)")

    monkeypatch.setattr(preview, "list_topics", down)
    response = post_preview(api, source="east")
    assert response.status_code == 503
    assert response.json() == {"detail": "cannot list the topics of 'east': Connection refused (east:9092)"}


def test_preview_and_check_need_the_admin_role(world, topics, api_as):
    viewer = api_as(VIEWER)
    assert post_preview(viewer, source="east").status_code == 403
    assert viewer.post("/api/v1/clusters/check/", {"alias": "x", "bootstrap_servers": "x:1"},
                       format="json").status_code == 403


def test_a_mirror_named_preview_and_a_cluster_named_check_still_have_their_urls(api, world):
    check = Cluster.objects.create(alias="check", bootstrap_servers="c:9092")
    create_mirror(name="preview", source=world[0], target=check)
    assert api.get("/api/v1/mirrors/preview/").json()["target"] == "check"
    assert api.patch("/api/v1/mirrors/preview/", {"topics": "a"}, format="json").json()["topics"] == "a"
    assert api.get("/api/v1/mirrors/preview/status/").status_code == 200
    assert api.get("/api/v1/clusters/check/").json()["bootstrap_servers"] == "c:9092"
    assert api.delete("/api/v1/mirrors/preview/").status_code == 204
    assert api.delete("/api/v1/clusters/check/").status_code == 204


# -- unsaved cluster check ------------------------------------------------------------------------

@pytest.fixture
def checked(monkeypatch):
    """Replaces the connection: records what would be connected to, answers reachable."""
    seen = []

    class Admin:
        def __init__(self, connection, timeout):
            seen.append(connection)

        def describe(self):
            return ClusterInfo("abc", 1, 3)

    monkeypatch.setattr(clusters, "KafkaAdmin", Admin)
    return seen


def test_check_of_unsaved_fields_answers_like_the_stored_check_and_saves_nothing(api, checked):
    response = api.post("/api/v1/clusters/check/", {"alias": "north", "bootstrap_servers": "n1:9092, n2:9092"},
                        format="json")
    assert response.status_code == 200, response.content
    assert response.json() == CheckResult(reachable=True, brokers=3, controller=1, cluster_id="abc").to_dict()
    assert checked[0].bootstrap_servers == "n1:9092,n2:9092"
    assert not Cluster.objects.filter(alias="north").exists()


def test_check_of_a_stored_alias_keeps_omitted_secrets_and_never_echoes_them(api, checked):
    api.post("/api/v1/clusters/", {"alias": "sec", "bootstrap_servers": "s:9093", "security_protocol": "SASL_SSL",
                                   "sasl_mechanism": "SCRAM-SHA-512", "username": "mm2", "password": "s3cret-pw"},
             format="json")
    response = api.post("/api/v1/clusters/check/", {"alias": "sec", "bootstrap_servers": "s2:9093",
                                                    "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                                                    "username": "mm2"}, format="json")
    assert response.status_code == 200, response.content
    assert checked[0].password == "s3cret-pw" and checked[0].bootstrap_servers == "s2:9093"
    assert "s3cret-pw" not in response.content.decode()
    assert Cluster.objects.get(alias="sec").bootstrap_servers == "s:9093"  # unchanged

    api.post("/api/v1/clusters/check/", {"alias": "sec", "bootstrap_servers": "s:9093", "security_protocol": "SASL_SSL",
                                         "sasl_mechanism": "SCRAM-SHA-512", "username": "mm2", "password": "other"},
             format="json")
    assert checked[1].password == "other"
    assert Cluster.objects.get(alias="sec").password == "s3cret-pw"


def test_check_of_an_unreachable_cluster_answers_200_with_the_error(api, kafka_unreachable):
    body = api.post("/api/v1/clusters/check/", {"alias": "gone", "bootstrap_servers": "127.0.0.1:1"},
                    format="json").json()
    assert body["reachable"] is False and "unreachable" in body["error"]


@pytest.mark.parametrize(("body", "field", "reason"), [
    ({"bootstrap_servers": "a:1"}, "alias", "required"),
    ({"alias": "bad.alias", "bootstrap_servers": "a:1"}, "alias", "no '.'"),
    ({"alias": "x"}, "bootstrap_servers", "required"),
    ({"alias": "x", "bootstrap_servers": "no-port"}, "bootstrap_servers", "port"),
    ({"alias": "x", "bootstrap_servers": "a:1", "security_protocol": "SASL_SSL"}, "sasl_mechanism", "required"),
    ({"alias": "x", "bootstrap_servers": "a:1", "security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
      "username": "u"}, "password", "required"),
    ({"alias": "x", "bootstrap_servers": "a:1", "config": {"bootstrap.servers": "b:1"}}, "config", "own field"),
])
def test_check_validation_is_the_create_validation(api, checked, body, field, reason):
    response = api.post("/api/v1/clusters/check/", body, format="json")
    assert response.status_code == 400, response.content
    assert reason in " ".join(response.json()[field])
    assert checked == []
