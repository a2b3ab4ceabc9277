"""Parsing kafka.strimzi.io/v1 KafkaMirrorMaker2 resources and multi-document files, without a database."""

import json
from pathlib import Path

import pytest
import yaml

from mirrors.interchange import strimzi
from mirrors.interchange.plan import InvalidContent
from mirrors.interchange.strimzi import documents

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"
MINIMAL = "005_kafkamirrormaker2_example1_minimal.yaml"


def example(name: str) -> str:
    return (PUBLISHED / name).read_text()


def changed(name: str, change) -> str:
    """A published example after `change(resource)` (its first document)."""
    resource = yaml.safe_load(example(name))
    change(resource)
    return yaml.safe_dump(resource, sort_keys=False)


def errors_of(text: str) -> dict:
    with pytest.raises(InvalidContent) as error:
        strimzi.parse(text)
    return error.value.errors


def test_minimal_v1_example_maps_target_source_and_connectors():
    plan = strimzi.parse(example(MINIMAL))
    assert [(c.alias, c.fields["bootstrap_servers"], c.fields["security_protocol"]) for c in plan.clusters] == [
        ("cluster-b", "cluster-b-kafka-bootstrap:9092", "PLAINTEXT"),
        ("cluster-a", "cluster-a-kafka-bootstrap:9092", "PLAINTEXT")]
    [mirror] = plan.mirrors
    assert (mirror.name, mirror.source, mirror.target) == ("my-mirror-maker-2", "cluster-a", "cluster-b")
    assert (mirror.fields["topics"], mirror.fields["groups"]) == (".*", ".*")
    assert mirror.connectors["source"]["tasks_max"] == 1
    assert mirror.connectors["source"]["config"]["offset-syncs.topic.location"] == "target"
    assert "offset-syncs.topic.location" not in mirror.connectors["checkpoint"]["config"], "held on the source"
    assert mirror.connectors["heartbeat"]["state"] == "stopped"
    skipped = {item["path"] for item in plan.unsupported}
    assert {"spec.replicas", "spec.target.groupId", "spec.target.configStorageTopic",
            "spec.target.config.plugin.discovery", "spec.target.config.config.storage.replication.factor"} <= skipped
    assert plan.ignored == [] and plan.warnings == [] and plan.needs_values == []


def test_tls_example_asks_for_each_trusted_certificate_pattern():
    plan = strimzi.parse(example("005_kafkamirrormaker2_example4_tls.yaml"))
    assert [(n["cluster"], n["field"], n["secret"]) for n in plan.needs_values] == [
        ("cluster-b", "ca_pem", "cluster-b-cluster-ca-cert/*.crt"),
        ("cluster-a", "ca_pem", "cluster-a-cluster-ca-cert/*.crt")]
    assert {c.fields["security_protocol"] for c in plan.clusters} == {"SSL"}


def test_multi_document_file_lists_the_other_resources_as_ignored():
    resources, ignored = documents.load(example("005_kafkamirrormaker2_example6_tls_auth.yaml"))
    assert [(r.version, r.root, r.body["metadata"]["name"]) for r in resources] == [("v1", "", "my-mirror-maker-2")]
    assert [(i["kind"], i["name"]) for i in ignored] == [
        ("KafkaNodePool", "source"), ("Kafka", "cluster-a"), ("KafkaNodePool", "target"), ("Kafka", "cluster-b"),
        ("KafkaUser", "cluster-a-user"), ("KafkaUser", "cluster-b-user")]
    plan = strimzi.parse(example("005_kafkamirrormaker2_example6_tls_auth.yaml"))
    assert {(n["cluster"], n["field"]) for n in plan.needs_values} == {
        (alias, field) for alias in ("cluster-a", "cluster-b") for field in ("ca_pem", "cert_pem", "key_pem")}


def test_several_mirror_makers_in_one_file_name_their_document():
    second = example(MINIMAL).replace("name: my-mirror-maker-2", "name: other").replace(
        'topicsPattern: ".*"', 'topicsPattern: "orders"')
    plan = strimzi.parse(example(MINIMAL) + "---\n" + second)
    assert [m.name for m in plan.mirrors] == ["my-mirror-maker-2", "other"]
    assert plan.mirrors[1].path == "documents[1].spec.mirrors[0]"
    assert [c.alias for c in plan.clusters] == ["cluster-b", "cluster-a"], "the same clusters, defined alike"
    moved = second.replace("cluster-b-kafka-bootstrap", "elsewhere")
    assert "other settings" in errors_of(example(MINIMAL) + "---\n" + moved)["documents[1].spec.target.alias"][0]


def test_empty_documents_are_skipped_and_a_stray_one_is_named():
    assert len(strimzi.parse("---\n" + example(MINIMAL) + "---\n").mirrors) == 1
    assert "documents[1]" in errors_of(example(MINIMAL) + "---\n- a list\n")
    assert "documents[1]" in errors_of(example(MINIMAL) + "---\nname: no kind\n")


@pytest.mark.parametrize("auth, message", [
    ({"type": "oauth", "clientId": "mm2"}, "OAuth"),
    ({"type": "custom", "sasl": True, "config": {"sasl.mechanism": "OAUTHBEARER"}}, "custom authentication"),
    ({"type": "kerberos"}, "unknown authentication type 'kerberos'"),
])
def test_v1_authentication_mirrorplane_cannot_run_is_an_error(auth, message):
    text = changed(MINIMAL, lambda r: r["spec"]["target"].__setitem__("authentication", auth))
    errors = errors_of(text)
    assert message in errors["spec.target.authentication.type"][0]
    assert "supports tls, scram-sha-256, scram-sha-512 and plain" in errors["spec.target.authentication.type"][0]


@pytest.mark.parametrize("kind, mechanism", [("scram-sha-256", "SCRAM-SHA-256"), ("plain", "PLAIN")])
def test_v1_sasl_authentication_maps_mechanism_and_user(kind, mechanism):
    auth = {"type": kind, "username": "mm2", "passwordSecret": {"secretName": "mm2-user", "password": "pw"}}
    plan = strimzi.parse(changed(MINIMAL, lambda r: r["spec"]["mirrors"][0]["source"].__setitem__(
        "authentication", auth)))
    source = plan.cluster("cluster-a")
    assert (source.fields["sasl_mechanism"], source.fields["username"], source.fields["security_protocol"]) == (
        mechanism, "mm2", "SASL_PLAINTEXT")
    assert plan.needs_values[0]["secret"] == "mm2-user/pw"


def test_v1beta2_keeps_listing_an_authentication_it_cannot_run():
    text = example("000_kafkamirrormaker2_example1_minimal.yaml").replace("alias: \"my-cluster-source\"", (
        "alias: \"my-cluster-source\"\n    authentication: {type: oauth}"), 1)
    assert "authentication: {type: oauth}" in text
    plan = strimzi.parse(text)
    assert "spec.clusters[0].authentication.type" in {u["path"] for u in plan.unsupported}


def test_connector_state_auto_restart_and_skipped_operations():
    def change(resource: dict) -> None:
        connector = resource["spec"]["mirrors"][0]["checkpointConnector"]
        connector |= {"state": "paused", "autoRestart": {"enabled": True, "maxRestarts": 5}, "version": "4.3.1",
                      "listOffsets": {"toConfigMap": {"name": "offsets"}}}
    plan = strimzi.parse(changed(MINIMAL, change))
    checkpoint = plan.mirrors[0].connectors["checkpoint"]
    assert (checkpoint["state"], checkpoint["auto_restart"]) == ("paused", {"enabled": True, "max_restarts": 5})
    skipped = {u["path"]: u["reason"] for u in plan.unsupported}
    assert "plugin's version" in skipped["spec.mirrors[0].checkpointConnector.version"]
    assert "offset operation" in skipped["spec.mirrors[0].checkpointConnector.listOffsets"]


def test_heartbeat_connector_comes_from_the_annotation_in_v1():
    heartbeat = {"tasksMax": 1, "config": {"emit.heartbeats.interval.seconds": "5"}}

    def change(resource: dict) -> None:
        resource["metadata"]["annotations"] = {"mirrorplane.io/heartbeat-connector": json.dumps(heartbeat)}
    connector = strimzi.parse(changed(MINIMAL, change)).mirrors[0].connectors["heartbeat"]
    assert connector["config"] == {"emit.heartbeats.interval.seconds": "5"} and "state" not in connector

    def broken(resource: dict) -> None:
        resource["metadata"]["annotations"] = {"mirrorplane.io/heartbeat-connector": "[1"}
    assert "metadata.annotations.mirrorplane.io/heartbeat-connector" in errors_of(changed(MINIMAL, broken))


def test_heartbeat_connector_field_is_not_v1():
    text = changed(MINIMAL, lambda r: r["spec"]["mirrors"][0].__setitem__("heartbeatConnector", {"tasksMax": 1}))
    plan = strimzi.parse(text)
    assert "spec.mirrors[0].heartbeatConnector" in {u["path"] for u in plan.unsupported}
    assert plan.mirrors[0].connectors["heartbeat"]["state"] == "stopped"
    older = strimzi.parse(text.replace("kafka.strimzi.io/v1\n", "kafka.strimzi.io/v1beta2\n"))
    assert older.mirrors[0].connectors["heartbeat"]["tasks_max"] == 1, "v1beta2 with spec.target still has it"


@pytest.mark.parametrize("text, path", [
    ("apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec: [a]\n", "spec"),
    ("apiVersion: kafka.strimzi.io/v9\nkind: KafkaMirrorMaker2\nspec: {}\n", "apiVersion"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Secret\n", "kind"),
])
def test_invalid_v1_resources_name_the_field(text, path):
    assert path in errors_of(text)


@pytest.mark.parametrize("fixture, path, value, error", [
    (MINIMAL, "metadata", "my-mirror-maker-2", "metadata"),
    (MINIMAL, "spec.target.config", ["a"], "spec.target.config"),
    ("005_kafkamirrormaker2_example4_tls.yaml", "spec.target.tls.trustedCertificates", 7,
     "spec.target.tls.trustedCertificates"),
    ("005_kafkamirrormaker2_example6_tls_auth.yaml", "spec.target.authentication.certificateAndKey", "user",
     "spec.target.authentication.certificateAndKey"),
    ("000_kafkamirrormaker2_example2_full.yaml", "spec.clusters.0.authentication.certificateAndKey", True,
     "spec.clusters[0].authentication.certificateAndKey"),
])
def test_a_value_of_the_wrong_type_is_an_error_not_a_crash(fixture, path, value, error):
    documents_ = list(yaml.safe_load_all(example(fixture)))
    resource = next(d for d in documents_ if d and d["kind"] == "KafkaMirrorMaker2")
    *parents, last = path.split(".")
    node = resource
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    assert error in errors_of(yaml.safe_dump_all(documents_))


def test_offset_flush_interval_ms_comes_from_the_connect_clusters_config():
    def worker_settings(resource):
        resource["spec"]["target"].setdefault("config", {})["offset.flush.interval.ms"] = 5000
        resource["spec"]["mirrors"][0]["source"].setdefault("config", {})["offset.flush.interval.ms"] = 7000

    plan = strimzi.parse(changed(MINIMAL, worker_settings))
    [mirror] = plan.mirrors
    assert mirror.connectors["source"]["config"]["offset.flush.interval.ms"] == "5000"
    assert all("offset.flush.interval.ms" not in c.fields.get("config", {}) for c in plan.clusters)
    [unsupported] = [u for u in plan.unsupported if "offset.flush" in u["path"]]
    assert unsupported["path"] == "spec.mirrors[0].source.config.offset.flush.interval.ms"
    assert "the Connect cluster's config" in unsupported["reason"]
