"""Strimzi KafkaMirrorMaker2 parsing and rendering, without a database."""

from pathlib import Path

import pytest
import yaml

from mirrors import interchange
from mirrors.interchange import strimzi
from mirrors.interchange.plan import InvalidContent, policy_of_class

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"


def example(name: str) -> str:
    return (PUBLISHED / name).read_text()


def unsupported_paths(plan) -> set[str]:
    return {item["path"] for item in plan.unsupported}


def test_minimal_example_maps_clusters_and_one_mirror_named_after_the_resource():
    plan = strimzi.parse(example("000_kafkamirrormaker2_example1_minimal.yaml"))
    assert [(c.alias, c.fields) for c in plan.clusters] == [
        ("my-cluster-source", {"bootstrap_servers": "my-cluster-source-kafka-bootstrap:9092",
                               "security_protocol": "PLAINTEXT"}),
        ("my-cluster-target", {"bootstrap_servers": "my-cluster-target-kafka-bootstrap:9092",
                               "security_protocol": "PLAINTEXT"})]
    [mirror] = plan.mirrors
    assert (mirror.name, mirror.source, mirror.target) == ("my-mirror-maker2", "my-cluster-source", "my-cluster-target")
    assert mirror.connectors["source"] == {"auto_restart": {"enabled": False}}
    assert mirror.connectors["checkpoint"]["state"] == "stopped"  # left out: Strimzi does not deploy it
    assert unsupported_paths(plan) == {"spec.version", "spec.connectCluster"}
    assert plan.needs_values == []


def test_full_example_moves_policy_to_the_mirror_and_lists_deployment_settings():
    plan = strimzi.parse(example("000_kafkamirrormaker2_example2_full.yaml"))
    [mirror] = plan.mirrors
    assert mirror.fields == {"topics": "topic1|topic2|topic3", "groups": "group1|group2|group3",
                             "replication_policy": "identity"}
    assert mirror.connectors["source"]["tasks_max"] == 10
    assert "replication.policy.class" not in mirror.connectors["source"]["config"]
    assert mirror.connectors["checkpoint"]["config"]["sync.group.offsets.enabled"] == "true"
    assert {"spec.replicas", "spec.resources", "spec.logging", "spec.jvmOptions", "spec.template", "spec.tracing",
            "spec.clusters[1].config.config.storage.replication.factor"} <= unsupported_paths(plan)
    assert {(n["cluster"], n["field"], n["secret"]) for n in plan.needs_values} >= {
        ("my-cluster-source", "ca_pem", "my-cluster-source-cluster-ca-cert/*.crt"),
        ("my-cluster-source", "key_pem", "my-user-source/source.key")}


def test_scram_authentication_asks_for_the_password_secret():
    plan = strimzi.parse(example("004_kafkamirrormaker2_example1_migration_unwrapped.yaml"))
    target = plan.cluster("my-target-cluster")
    assert target.fields["security_protocol"] == "SASL_SSL"
    assert target.fields["sasl_mechanism"] == "SCRAM-SHA-512"
    assert target.fields["username"] == "kafka.mm2.migration-user"
    assert {"cluster": "my-target-cluster", "field": "password", "secret": "mm2-target-cluster/password",
            "reason": "spec.clusters[1].authentication.passwordSecret"} in plan.needs_values
    assert plan.mirrors[0].fields["replication_policy"] == "identity"  # io.strimzi...IdentityReplicationPolicy


def test_verbatim_migration_article_names_the_wrapped_line():
    with pytest.raises(InvalidContent) as error:
        strimzi.parse(example("004_kafkamirrormaker2_example1_migration.yaml"))
    assert error.value.errors["content"][0].startswith("line 76: invalid YAML")


def test_misindented_tls_secret_is_listed_not_dropped():
    plan = strimzi.parse(example("003_kafkamirrormaker2_example4_tls.yaml"))
    assert "spec.clusters[1].tls.secretName" in unsupported_paths(plan)
    assert plan.mirrors == []


@pytest.mark.parametrize("text, path", [
    ("kind: KafkaUser\napiVersion: kafka.strimzi.io/v1beta2\nspec: {}\n", "kind"),
    ("kind: KafkaMirrorMaker2\napiVersion: v1\nspec: {}\n", "apiVersion"),
    ("kind: KafkaMirrorMaker2\napiVersion: kafka.strimzi.io/v1beta2\nspec:\n  - a\n", "spec"),
    ("kind: KafkaMirrorMaker2\n  bad: [\n", "content"),
])
def test_invalid_resources_name_the_field(text, path):
    with pytest.raises(InvalidContent) as error:
        strimzi.parse(text)
    assert path in error.value.errors


def test_policy_classes_map_by_their_simple_name():
    assert policy_of_class("org.apache.kafka.connect.mirror.DefaultReplicationPolicy") == "default"
    assert policy_of_class("io.strimzi.kafka.connect.mirror.IdentityReplicationPolicy") == "identity"
    assert policy_of_class("org.apache.kafka.mirror.LegacyReplicationPolicy") == "legacy"
    assert policy_of_class("com.example.PrefixPolicy") is None


def test_disagreeing_connectors_are_an_error():
    text = """apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata: {name: m}
spec:
  mirrors:
  - sourceCluster: a
    targetCluster: b
    sourceConnector: {config: {replication.policy.separator: "-"}}
    checkpointConnector: {config: {replication.policy.separator: "_"}}
"""
    with pytest.raises(InvalidContent) as error:
        strimzi.parse(text)
    assert "spec.mirrors[0].checkpointConnector.config.replication.policy.separator" in error.value.errors


def test_format_detection():
    assert interchange.detect_format(example("000_kafkamirrormaker2_example1_minimal.yaml")) == "strimzi"
    assert interchange.detect_format(example("001_properties_example3_bidirectional.properties")) == "properties"
    assert yaml.safe_load(example("003_kafkamirrormaker2_example3_minimal.yaml"))["kind"] == "KafkaMirrorMaker2"


def test_offset_flush_interval_ms_comes_from_the_connect_clusters_config():
    resource = yaml.safe_load(example("000_kafkamirrormaker2_example1_minimal.yaml"))
    for cluster in resource["spec"]["clusters"]:
        cluster.setdefault("config", {})["offset.flush.interval.ms"] = 5000 if cluster["alias"].endswith("target") \
            else 7000
    plan = strimzi.parse(yaml.safe_dump(resource))
    [mirror] = plan.mirrors
    assert mirror.connectors["source"]["config"]["offset.flush.interval.ms"] == "5000"
    assert "config" not in plan.cluster("my-cluster-target").fields
    [unsupported] = [u for u in plan.unsupported if "offset.flush" in u["path"]]
    assert unsupported["path"] == "spec.clusters[0].config.offset.flush.interval.ms"
    assert "the connectCluster's config" in unsupported["reason"]
