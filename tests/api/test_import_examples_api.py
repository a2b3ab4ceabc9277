"""`POST /api/v1/import/` of every published example: a dry run, then the real import."""

from __future__ import annotations

import pytest

from mirrors.models import Cluster, Event, Mirror
from tests import pem
from tests.api.importing import (
    BASE,
    BASE_VALUES,
    MIGRATION_TYPOS,
    STRIMZI_ALIASES,
    connector,
    example,
    import_file,
    import_json,
    migration_example,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def existing_clusters():
    """For fragments (`# ...`) that name clusters without defining them."""
    for alias in (*STRIMZI_ALIASES, "cluster-1", "cluster-2"):
        Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092")


# -- one test per published example: dry run, then the real import -------------------------------------------------
def test_000_example1_minimal(api):
    text = example("000_kafkamirrormaker2_example1_minimal.yaml")
    dry = import_file(api, text, "?dry_run=true")
    assert dry.status_code == 200, dry.content
    assert dry.json()["created"] == {"clusters": list(STRIMZI_ALIASES), "mirrors": ["my-mirror-maker2"]}
    assert not Cluster.objects.exists() and not Mirror.objects.exists() and not Event.objects.exists()
    response = import_file(api, text)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["dry_run"] is False and body["created"]["mirrors"] == ["my-mirror-maker2"]
    assert {u["path"] for u in body["unsupported"]} == {"spec.version", "spec.connectCluster"}
    mirror = Mirror.objects.get(name="my-mirror-maker2")
    assert (mirror.source.alias, mirror.target.alias, mirror.topics) == ("my-cluster-source", "my-cluster-target", ".*")
    assert connector("my-mirror-maker2", "source").desired_state == "running"
    assert connector("my-mirror-maker2", "heartbeat").desired_state == "stopped"
    assert Event.objects.filter(action="import", mirror="my-mirror-maker2").count() == 1
    assert Event.objects.filter(action="import", cluster="my-cluster-source").count() == 1


def test_000_example2_full(api):
    response = import_file(api, example("000_kafkamirrormaker2_example2_full.yaml"))
    assert response.status_code == 201, response.content
    mirror = Mirror.objects.get(name="my-mirror-maker2")
    assert (mirror.topics, mirror.groups, mirror.replication_policy) == (
        "topic1|topic2|topic3", "group1|group2|group3", "identity")
    source = connector(mirror.name, "source")
    assert (source.tasks_max, source.auto_restart_enabled) == (10, True)
    assert source.config == {"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
                             "sync.topic.acls.enabled": "false", "refresh.topics.interval.seconds": "60"}
    assert connector(mirror.name, "checkpoint").config["sync.group.offsets.interval.seconds"] == "60"
    cluster = Cluster.objects.get(alias="my-cluster-source")
    assert cluster.security_protocol == "SSL" and cluster.ca_pem == "" and cluster.key_pem == ""
    assert len(response.json()["needs_values"]) == 6
    assert "spec.jvmOptions" in {u["path"] for u in response.json()["unsupported"]}


def test_000_example3_multiple_instances(api, existing_clusters):
    response = import_file(api, example("000_kafkamirrormaker2_example3_multiple_instances.yaml"))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["created"] == {"clusters": [], "mirrors": []} and body["reused"]["clusters"] == ["my-cluster-target"]
    assert "spec.clusters[0].config.group.id" in {u["path"] for u in body["unsupported"]}


def test_000_example3_without_the_cluster_names_it(api):
    response = import_file(api, example("000_kafkamirrormaker2_example3_multiple_instances.yaml"))
    assert response.status_code == 400
    assert "unknown cluster alias 'my-cluster-target'" in response.json()["spec.clusters[0].alias"][0]


def test_000_example4_producers_consumers(api, existing_clusters):
    response = import_file(api, example("000_kafkamirrormaker2_example4_producers_consumers.yaml"))
    assert response.status_code == 201, response.content
    source = connector("my-mirror-maker2", "source")
    assert source.tasks_max == 5 and source.config["producer.override.batch.size"] == "327680"
    assert connector("my-mirror-maker2", "heartbeat").config == {"producer.override.request.timeout.ms": "30000"}


def test_000_example5_source_tasks(api, existing_clusters):
    assert import_file(api, example("000_kafkamirrormaker2_example5_source_tasks.yaml")).status_code == 201
    assert connector("my-mirror-maker2", "source").tasks_max == 10


def test_000_example6_checkpoint_tasks(api, existing_clusters):
    assert import_file(api, example("000_kafkamirrormaker2_example6_checkpoint_tasks.yaml")).status_code == 201
    assert connector("my-mirror-maker2", "checkpoint").tasks_max == 10
    assert connector("my-mirror-maker2", "source").desired_state == "stopped"


def test_000_example7_mtls(api):
    response = import_file(api, example("000_kafkamirrormaker2_example7_mtls.yaml"), "?dry_run=true")
    assert response.status_code == 200, response.content
    assert {(n["cluster"], n["field"], n["secret"]) for n in response.json()["needs_values"]} == {
        ("my-source-cluster", "ca_pem", "my-source-cluster-cluster-ca-cert/*.crt"),
        ("my-source-cluster", "cert_pem", "my-source-user/user.crt"),
        ("my-source-cluster", "key_pem", "my-source-user/user.key"),
        ("my-target-cluster", "ca_pem", "my-target-cluster-cluster-ca-cert/*.crt"),
        ("my-target-cluster", "cert_pem", "my-target-user/user.crt"),
        ("my-target-cluster", "key_pem", "my-target-user/user.key")}
    assert import_file(api, example("000_kafkamirrormaker2_example7_mtls.yaml")).status_code == 201
    mirror = Mirror.objects.get(name="my-mirror-maker-2")
    assert mirror.topics == "topic1|topic2|topic3"
    assert connector(mirror.name, "checkpoint").config == {"checkpoints.topic.replication.factor": "1",
                                                           "sync.group.offsets.enabled": "true"}


def test_000_example8_stopped(api, existing_clusters):
    assert import_file(api, example("000_kafkamirrormaker2_example8_stopped.yaml")).status_code == 201
    source = connector("my-mirror-maker2", "source")
    assert (source.desired_state, source.tasks_max, source.auto_restart_enabled) == ("stopped", 10, True)


def test_001_example1_tasks_max(api, existing_clusters):
    text = example("001_properties_example1_tasks_max.properties")
    response = import_file(api, text, content_type="text/x-java-properties")
    assert response.status_code == 201, response.content
    assert response.json()["created"]["mirrors"] == []
    assert "no flow is enabled" in " ".join(response.json()["warnings"])
    combined = import_json(api, {"content": example(BASE) + text, "values": BASE_VALUES}, "?replace=true")
    assert combined.status_code == 201, combined.content
    assert combined.json()["updated"]["clusters"] == ["cluster-1", "cluster-2"]
    assert connector("cluster-1-to-cluster-2", "source").tasks_max == 10


def test_001_example2_high_volume(api, existing_clusters):
    text = example("001_properties_example2_high_volume.properties")
    response = import_file(api, text, "?replace=true", content_type="text/plain")
    assert response.status_code == 201, response.content
    assert Cluster.objects.get(alias="cluster-2").config == {"producer.buffer.memory": "8388608"}
    assert "line 3: cluster-2.offset.flush.timeout.ms" in {u["path"] for u in response.json()["unsupported"]}


def test_001_example3_bidirectional(api):
    text = example(BASE)
    dry = import_file(api, text, "?dry_run=true", content_type="text/plain")
    assert dry.status_code == 200, dry.content
    assert dry.json()["created"]["mirrors"] == ["cluster-1-to-cluster-2", "cluster-2-to-cluster-1"]
    without_addresses = import_file(api, text, content_type="text/plain")
    assert without_addresses.status_code == 400
    assert "values.cluster-1.bootstrap_servers" in without_addresses.json()
    response = import_json(api, {"format": "properties", "content": text, "values": BASE_VALUES})
    assert response.status_code == 201, response.content
    assert Cluster.objects.get(alias="cluster-1").bootstrap_servers == "one:443"
    forward = Mirror.objects.get(name="cluster-1-to-cluster-2")
    assert (forward.separator, forward.topics) == ("-", ".*")
    assert connector(forward.name, "source").config["refresh.topics.interval.seconds"] == "60"
    assert {n["field"] for n in response.json()["needs_values"]} == {"ca_pem", "cert_pem", "key_pem"}


@pytest.mark.parametrize("snippet, check", [
    ("001_properties_example4_identity_policy.properties", lambda m: m.replication_policy == "identity"),
    ("001_properties_example5_sync_group_offsets.properties",
     lambda m: m.connectors.get(kind="checkpoint").config["sync.group.offsets.enabled"] == "true"),
    ("001_properties_example6_legacy_mode.properties", lambda m: m.replication_policy == "legacy"
     and m.connectors.get(kind="heartbeat").config == {"emit.heartbeats.enabled": "false"}),
    ("002_properties_example2_legacy_mode.properties", lambda m: m.replication_policy == "legacy"),
])
def test_001_002_snippets_added_to_the_bidirectional_file(api, snippet, check):
    alone = import_file(api, example(snippet), content_type="text/plain")
    assert alone.status_code == 400 and "content" in alone.json()
    response = import_json(api, {"content": example(BASE) + example(snippet), "values": BASE_VALUES})
    assert response.status_code == 201, response.content
    assert all(check(mirror) for mirror in Mirror.objects.all()) and Mirror.objects.count() == 2


def test_002_example1_bidirectional(api):
    values = {"cluster-1": {"bootstrap_servers": "one:443", "ca_pem": pem.ca().cert_pem},
              "cluster-2": {"bootstrap_servers": "two:443"}}
    response = import_json(api, {"content": example("002_properties_example1_bidirectional.properties"),
                                 "values": values})
    assert response.status_code == 201, response.content
    assert Cluster.objects.get(alias="cluster-1").ca_pem == pem.ca().cert_pem.strip()
    assert ("cluster-1", "ca_pem") not in {(n["cluster"], n["field"]) for n in response.json()["needs_values"]}
    assert Mirror.objects.count() == 2


def test_003_example1_topics_pattern(api, existing_clusters):
    assert import_file(api, example("003_kafkamirrormaker2_example1_topics_pattern.yaml")).status_code == 201
    assert Mirror.objects.get(name="my-mirror-maker2").topics == ".*"


def test_003_example2_groups_pattern(api, existing_clusters):
    assert import_file(api, example("003_kafkamirrormaker2_example2_groups_pattern.yaml")).status_code == 201
    assert Mirror.objects.get(name="my-mirror-maker2").groups == "group1|group2|group3"


def test_003_example3_minimal_v1alpha1(api):
    response = import_file(api, example("003_kafkamirrormaker2_example3_minimal.yaml"))
    assert response.status_code == 201, response.content
    assert "apiVersion kafka.strimzi.io/v1alpha1 read as kafka.strimzi.io/v1beta2" in response.json()["warnings"]


def test_003_example4_tls_clusters_only(api):
    response = import_file(api, example("003_kafkamirrormaker2_example4_tls.yaml"))
    assert response.status_code == 201, response.content
    assert response.json()["created"] == {"clusters": list(STRIMZI_ALIASES), "mirrors": []}
    assert "spec.clusters[1].tls.secretName" in {u["path"] for u in response.json()["unsupported"]}


def test_003_example5_connector_config_outside_mirrors(api):
    response = import_file(api, example("003_kafkamirrormaker2_example5_connector_config.yaml"))
    assert response.status_code == 201, response.content
    assert {u["path"] for u in response.json()["unsupported"]} == {
        "spec.sourceConnector", "spec.heartbeatConnector", "spec.checkpointConnector"}


def test_004_example1_migration_verbatim_names_the_line(api):
    response = import_file(api, example("004_kafkamirrormaker2_example1_migration.yaml"))
    assert response.status_code == 400
    assert response.json()["content"][0].startswith("line 76: invalid YAML")


def test_004_example1_migration_as_published_is_refused_naming_each_unknown_property(api):
    text = example("004_kafkamirrormaker2_example1_migration_unwrapped.yaml")
    response = import_json(api, {"content": text, "values": {"my-target-cluster": {"password": "s3cret"}}})
    assert response.status_code == 400, response.content
    messages = response.json()["spec.clusters[1].config"]
    assert [m.split(":")[0] for m in messages] == list(MIGRATION_TYPOS)
    assert all("MIRRORPLANE_CLIENT_CONFIG_ALLOW" in m for m in messages)
    assert not Cluster.objects.exists() and not Mirror.objects.exists()


def test_004_example1_migration(api):
    text = migration_example()
    response = import_json(api, {"content": text, "values": {"my-target-cluster": {"password": "s3cret"}}})
    assert response.status_code == 201, response.content
    target = Cluster.objects.get(alias="my-target-cluster")
    assert (target.security_protocol, target.sasl_mechanism, target.password) == ("SASL_SSL", "SCRAM-SHA-512", "s3cret")
    mirror = Mirror.objects.get(name="my-mirror-maker-2")
    assert mirror.replication_policy == "identity" and mirror.groups == "^(app1.*|app2.*)$"
    assert connector(mirror.name, "checkpoint").tasks_max == 8
    assert connector(mirror.name, "source").config["offset-syncs.topic.location"] == "target", \
        "held once per mirror, on the source connector"
    assert "offset-syncs.topic.location" not in connector(mirror.name, "checkpoint").config


def test_missing_password_is_reported_not_fatal(api):
    text = migration_example()
    response = import_file(api, text)
    assert response.status_code == 201, response.content
    assert {"cluster": "my-target-cluster", "field": "password", "secret": "mm2-target-cluster/password",
            "reason": "spec.clusters[1].authentication.passwordSecret"} in response.json()["needs_values"]
    assert Cluster.objects.get(alias="my-target-cluster").password == ""
