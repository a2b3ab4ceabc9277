"""`POST /api/v1/import/` of bad input and conflicts, and `GET /api/v1/mirrors/{name}/export/` round trips."""

from __future__ import annotations

import pytest

from mirrors.models import Cluster, Mirror
from tests import pem
from tests.api.importing import (
    example,
    import_file,
)

pytestmark = pytest.mark.django_db


# -- bad input ------------------------------------------------------------------------------------------------
RESOURCE = """apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata: {{name: m1}}
spec:
  clusters:
  - {{alias: east, bootstrapServers: "east:9092"}}
  - {{alias: west, bootstrapServers: "west:9092"}}
  mirrors:
  - sourceCluster: {source}
    targetCluster: west
    topicsPattern: "{topics}"
    sourceConnector:
      config: {{replication.policy.class: {policy}}}
"""


def resource(source="east", topics=".*", policy="org.apache.kafka.connect.mirror.DefaultReplicationPolicy"):
    return RESOURCE.format(source=source, topics=topics, policy=policy)


@pytest.mark.parametrize("text, path, message", [
    ("apiVersion: x\nkind: [\n", "content", "line 3: invalid YAML"),
    ("apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnect\nspec: {}\n", "kind", "expected KafkaMirrorMaker2"),
    (resource(source="nowhere"), "spec.mirrors[0].sourceCluster", "unknown cluster alias 'nowhere'"),
    (resource(topics="orders(["), "spec.mirrors[0].topicsPattern", "invalid regular expression"),
    (resource(policy="com.example.MyPolicy"), "spec.mirrors[0].sourceConnector.config.replication.policy.class",
     "unsupported replication policy class"),
])
def test_bad_input_is_400_naming_the_path(api, text, path, message):
    response = import_file(api, text)
    assert response.status_code == 400, response.content
    assert message in response.json()[path][0]
    assert not Cluster.objects.exists() and not Mirror.objects.exists()


def test_conflicting_cluster_is_409_unless_replace(api):
    Cluster.objects.create(alias="east", bootstrap_servers="elsewhere:9092")
    response = import_file(api, resource())
    assert response.status_code == 409
    assert "bootstrap_servers" in response.json()["clusters.east"][0]
    replaced = import_file(api, resource(), "?replace=true")
    assert replaced.status_code == 201, replaced.content
    assert replaced.json()["updated"]["clusters"] == ["east"]
    assert Cluster.objects.get(alias="east").bootstrap_servers == "east:9092"
    again = import_file(api, resource())
    assert again.status_code == 409 and "mirrors.m1" in again.json()


def test_import_needs_admin_and_export_allows_viewers(api, api_as):
    assert import_file(api, resource()).status_code == 201
    viewer = api_as("viewer")
    assert import_file(viewer, resource(), "?dry_run=true").status_code == 403
    assert viewer.get("/api/v1/mirrors/m1/export/?format=properties").status_code == 200


# -- export and round trips -----------------------------------------------------------------------------------
def create_rich_mirror(api) -> dict:
    clusters = [
        {"alias": "east", "bootstrap_servers": "east:9093", "security_protocol": "SASL_SSL",
         "sasl_mechanism": "SCRAM-SHA-512", "username": "mm2", "password": "top-secret",
         "ca_pem": pem.ca().cert_pem, "config": {"client.dns.lookup": "use_all_dns_ips"}},
        {"alias": "west", "bootstrap_servers": "west:9093", "security_protocol": "SSL",
         "cert_pem": pem.client().cert_pem, "key_pem": pem.client().key_pem},
    ]
    for cluster in clusters:
        assert api.post("/api/v1/clusters/", cluster, format="json").status_code == 201
    mirror = {"name": "orders-backup", "source": "east", "target": "west", "topics": "orders.*, payments",
              "topics_exclude": "", "groups": "billing-.*", "replication_policy": "legacy", "separator": "_",
              "spark": {"executor_memory": "2g"},
              "connectors": {
                  "source": {"tasks_max": 4, "config": {"sync.topic.acls.enabled": "false",
                                                        "producer.override.linger.ms": "100",
                                                        "offset-syncs.topic.location": "target"}},
                  "checkpoint": {"tasks_max": 2, "state": "paused", "auto_restart": {"max_restarts": 3},
                                 "config": {"sync.group.offsets.enabled": "true"}},
                  "heartbeat": {"auto_restart": {"enabled": False}, "config": {"refresh.topics.enabled": "false"}}}}
    response = api.post("/api/v1/mirrors/", mirror, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def comparable(body: dict) -> dict:
    return {k: v for k, v in body.items() if k not in ("generation", "created_at", "updated_at")}


def cluster_fields(alias: str) -> dict:
    cluster = Cluster.objects.get(alias=alias)
    return {f: getattr(cluster, f) for f in ("bootstrap_servers", "security_protocol", "sasl_mechanism", "username",
                                             "config")}


@pytest.mark.parametrize("query, media_type", [("format=strimzi", "application/yaml"),
                                               ("format=strimzi&version=v1beta2", "application/yaml"),
                                               ("format=properties", "text/plain")])
def test_export_then_import_round_trips(api, query, media_type):
    before = create_rich_mirror(api)
    clusters_before = {alias: cluster_fields(alias) for alias in ("east", "west")}
    response = api.get(f"/api/v1/mirrors/orders-backup/export/?{query}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith(media_type)
    text = response.content.decode()
    for secret in ("top-secret", "PRIVATE KEY", pem.key_body(pem.client().key_pem),
                   pem.client().cert_pem.splitlines()[1], pem.ca().cert_pem.splitlines()[1]):
        assert secret not in text
    Mirror.objects.all().delete()
    Cluster.objects.all().delete()
    imported = import_file(api, text, content_type=media_type)
    assert imported.status_code == 201, imported.content
    created = imported.json()["created"]
    assert (sorted(created["clusters"]), created["mirrors"]) == (["east", "west"], ["orders-backup"])
    assert {(n["cluster"], n["field"]) for n in imported.json()["needs_values"]} == {
        ("east", "password"), ("east", "ca_pem"), ("west", "cert_pem"), ("west", "key_pem")}
    after = api.get("/api/v1/mirrors/orders-backup/").json()
    assert comparable(after) == comparable(before)
    assert {alias: cluster_fields(alias) for alias in ("east", "west")} == clusters_before


def test_imported_example_round_trips_through_both_formats(api):
    assert import_file(api, example("000_kafkamirrormaker2_example2_full.yaml")).status_code == 201
    before = api.get("/api/v1/mirrors/my-mirror-maker2/").json()
    for query in ("format=strimzi", "format=strimzi&version=v1beta2", "format=properties"):
        text = api.get(f"/api/v1/mirrors/my-mirror-maker2/export/?{query}").content.decode()
        Mirror.objects.all().delete()
        Cluster.objects.all().delete()
        assert import_file(api, text, content_type="text/plain").status_code == 201
        assert comparable(api.get("/api/v1/mirrors/my-mirror-maker2/").json()) == comparable(before), query


def test_export_of_unknown_mirror_or_format(api):
    assert api.get("/api/v1/mirrors/nope/export/").status_code == 404
    create_rich_mirror(api)
    response = api.get("/api/v1/mirrors/orders-backup/export/?format=xml")
    assert response.status_code == 400 and "format" in response.json()


def test_schema_still_builds(api):
    response = api.get("/api/v1/schema/")
    assert response.status_code == 200
    assert b"/api/v1/import/" in response.content and b"/export/" in response.content
