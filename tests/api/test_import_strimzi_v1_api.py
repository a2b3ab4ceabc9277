"""`POST /api/v1/import/` of Strimzi's own kafka.strimzi.io/v1 examples, their round trips through
`GET /api/v1/mirrors/{name}/export/?version=v1|v1beta2`, and the files the import refuses."""

from pathlib import Path

import pytest
import yaml

from mirrors.models import Cluster, Event, Mirror
from tests import pem

pytestmark = pytest.mark.django_db

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"
MINIMAL = "005_kafkamirrormaker2_example1_minimal.yaml"
SCRAM = "005_kafkamirrormaker2_example5_scram_sha_512_auth.yaml"
TLS_AUTH = "005_kafkamirrormaker2_example6_tls_auth.yaml"
# fixture -> (mirror name, {(alias, field)} of the secrets it refers to)
EXAMPLES = {
    MINIMAL: ("my-mirror-maker-2", set()),
    "005_kafkamirrormaker2_example2_custom_replication_policy.yaml": ("my-mirror-maker-2", set()),
    "005_kafkamirrormaker2_example3_sync_groups.yaml": ("my-mirror-maker-2", set()),
    "005_kafkamirrormaker2_example4_tls.yaml": ("my-mirror-maker-2", {("cluster-a", "ca_pem"),
                                                                      ("cluster-b", "ca_pem")}),
    SCRAM: ("my-mirror-maker-2", {(alias, field) for alias in ("cluster-a", "cluster-b")
                                  for field in ("ca_pem", "password")}),
    TLS_AUTH: ("my-mirror-maker-2", {(alias, field) for alias in ("cluster-a", "cluster-b")
                                     for field in ("ca_pem", "cert_pem", "key_pem")}),
    "005_kafkamirrormaker2_example7_metrics.yaml": ("my-mm2-cluster", set()),
}
NODE_POOLS_KAFKAS_USERS = [
    {"kind": "KafkaNodePool", "name": "source"}, {"kind": "Kafka", "name": "cluster-a"},
    {"kind": "KafkaNodePool", "name": "target"}, {"kind": "Kafka", "name": "cluster-b"},
    {"kind": "KafkaUser", "name": "cluster-a-user"}, {"kind": "KafkaUser", "name": "cluster-b-user"}]
IGNORED = {SCRAM: NODE_POOLS_KAFKAS_USERS, TLS_AUTH: NODE_POOLS_KAFKAS_USERS,
           "005_kafkamirrormaker2_example7_metrics.yaml": [{"kind": "ConfigMap", "name": "mirror-maker-2-metrics"}]}
SECRET_VALUES = {"ca_pem": pem.ca().cert_pem, "cert_pem": pem.client().cert_pem, "key_pem": pem.client().key_pem,
                 "password": "s3cret"}
CLUSTER_FIELDS = ("bootstrap_servers", "security_protocol", "sasl_mechanism", "username", "config")


def example(name: str) -> str:
    return (PUBLISHED / name).read_text()


def import_file(api, text: str, query: str = ""):
    return api.post(f"/api/v1/import/{query}", data=text.encode(), content_type="application/yaml")


def import_with_values(api, text: str, needs: set[tuple[str, str]]):
    values: dict[str, dict[str, str]] = {}
    for alias, field in needs:
        values.setdefault(alias, {})[field] = SECRET_VALUES[field]
    return api.post("/api/v1/import/", {"content": text, "values": values}, format="json")


def mirror_state(api, name: str) -> dict:
    """What an import decides: the mirror as the API shows it, and its clusters' fields (secrets aside)."""
    mirror = {k: v for k, v in api.get(f"/api/v1/mirrors/{name}/").json().items()
              if k not in ("generation", "created_at", "updated_at")}
    clusters = {alias: {f: getattr(Cluster.objects.get(alias=alias), f) for f in CLUSTER_FIELDS}
                for alias in (mirror["source"], mirror["target"])}
    return {"mirror": mirror, "clusters": clusters}


def forget_everything() -> None:
    Mirror.objects.all().delete()
    Cluster.objects.all().delete()


# -- every published example: preview, import with its secrets, export and import again ---------------------------
@pytest.mark.parametrize("fixture", list(EXAMPLES))
def test_published_v1_example_imports(api, fixture):
    name, needs = EXAMPLES[fixture]
    text = example(fixture)
    dry = import_file(api, text, "?dry_run=true")
    assert dry.status_code == 200, dry.content
    assert {(n["cluster"], n["field"]) for n in dry.json()["needs_values"]} == needs
    assert dry.json()["ignored"] == IGNORED.get(fixture, [])
    assert dry.json()["created"] == {"clusters": ["cluster-b", "cluster-a"], "mirrors": [name]}
    assert not Cluster.objects.exists() and not Mirror.objects.exists() and not Event.objects.exists()
    response = import_with_values(api, text, needs)
    assert response.status_code == 201, response.content
    assert response.json()["needs_values"] == [] and response.json()["ignored"] == IGNORED.get(fixture, [])
    mirror = Mirror.objects.get(name=name)
    assert (mirror.source.alias, mirror.target.alias, mirror.topics, mirror.groups) == (
        "cluster-a", "cluster-b", ".*", ".*")
    for alias, field in needs:
        assert getattr(Cluster.objects.get(alias=alias), field).strip() == SECRET_VALUES[field].strip(), (alias, field)
    assert Event.objects.filter(action="import", mirror=name).count() == 1


@pytest.mark.parametrize("fixture", list(EXAMPLES))
def test_published_v1_example_round_trips_through_v1_and_v1beta2(api, fixture):
    name, needs = EXAMPLES[fixture]
    assert import_with_values(api, example(fixture), needs).status_code == 201
    before = mirror_state(api, name)
    for version in ("v1", "v1beta2"):
        response = api.get(f"/api/v1/mirrors/{name}/export/?version={version}")
        assert response.status_code == 200
        text = response.content.decode()
        assert yaml.safe_load(text)["apiVersion"] == f"kafka.strimzi.io/{version}"
        assert "s3cret" not in text and pem.key_body(pem.client().key_pem) not in text
        forget_everything()
        again = import_file(api, text)
        assert again.status_code == 201, (version, again.content)
        assert {(n["cluster"], n["field"]) for n in again.json()["needs_values"]} == needs, version
        assert mirror_state(api, name) == before, version
        forget_everything()
        assert import_with_values(api, example(fixture), needs).status_code == 201


def test_scram_example_maps_authentication_and_waits_for_passwords(api):
    response = import_file(api, example(SCRAM))
    assert response.status_code == 201, response.content
    target = Cluster.objects.get(alias="cluster-b")
    assert (target.security_protocol, target.sasl_mechanism, target.username, target.password) == (
        "SASL_SSL", "SCRAM-SHA-512", "cluster-b-user", "")
    assert {"cluster": "cluster-b", "field": "password", "secret": "cluster-b-user/password",
            "reason": "spec.target.authentication.passwordSecret"} in response.json()["needs_values"]
    checkpoint = Mirror.objects.get(name="my-mirror-maker-2").connectors.get(kind="checkpoint")
    assert checkpoint.config["sync.group.offsets.enabled"] == "true"


def test_tls_auth_example_without_a_source_connector_creates_it_stopped(api):
    response = import_file(api, example(TLS_AUTH), "?dry_run=true")
    assert "spec.mirrors[0].sourceConnector is absent: the source connector is created stopped" in (
        response.json()["warnings"])
    mirror = response.json()["mirrors"][0]
    assert mirror["connectors"]["source"]["state"] == "stopped"
    assert mirror["connectors"]["checkpoint"]["tasks_max"] == 1


def test_custom_replication_policy_example_is_identity(api):
    assert import_file(api, example("005_kafkamirrormaker2_example2_custom_replication_policy.yaml")).status_code == 201
    assert Mirror.objects.get(name="my-mirror-maker-2").replication_policy == "identity"


# -- what the import refuses: 400 naming the field, nothing stored -------------------------------------------------
def minimal_with(change) -> str:
    """Strimzi's minimal v1 example, changed by `change(resource)`."""
    resource = yaml.safe_load(example(MINIMAL))
    change(resource)
    return yaml.safe_dump(resource, sort_keys=False)


def _set(path: str, value):
    def change(resource: dict) -> None:
        *parents, last = path.split(".")
        node = resource
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return change


@pytest.mark.parametrize("text, path, message", [
    (example(MINIMAL).replace("kafka.strimzi.io/v1\n", "kafka.strimzi.io/v2\n"), "apiVersion",
     "expected kafka.strimzi.io/v1 or kafka.strimzi.io/v1beta2"),
    (example(MINIMAL).replace("kind: KafkaMirrorMaker2", "kind: KafkaConnect"), "kind",
     "expected KafkaMirrorMaker2, got 'KafkaConnect'"),
    (example(SCRAM).split("---\n\napiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2")[0], "kind",
     "the file holds only Kafka, KafkaNodePool, KafkaUser"),
    (minimal_with(_set("spec.target.authentication", {"type": "oauth", "clientId": "mm2"})),
     "spec.target.authentication.type", "OAuth needs Strimzi's OAuth login"),
    (minimal_with(_set("spec.mirrors.0.source.authentication", {"type": "custom", "sasl": True, "config": {}})),
     "spec.mirrors[0].source.authentication.type", "custom authentication passes arbitrary client properties"),
    (minimal_with(_set("spec.mirrors.0.source", None)), "spec.mirrors[0].source", "required: the source cluster"),
    (minimal_with(_set("spec.target", None)), "spec.target", "required: the target cluster"),
    (minimal_with(_set("spec.target.bootstrapServers", None)), "spec.target.bootstrapServers", "required"),
    (minimal_with(_set("spec.clusters", [{"alias": "cluster-a"}])), "spec.clusters",
     "belongs to the spec.clusters shape"),
    (minimal_with(_set("spec.mirrors.0.sourceCluster", "cluster-a")), "spec.mirrors[0].sourceCluster",
     "names its clusters in spec.mirrors[].source"),
    (minimal_with(_set("spec.mirrors.0.sourceConnector.tasksMax", 0)), "spec.mirrors[0].sourceConnector.tasksMax",
     "greater than or equal to 1"),
    (minimal_with(_set("spec.mirrors.0.checkpointConnector.state", "sleeping")),
     "spec.mirrors[0].checkpointConnector.state", ""),
    (example(MINIMAL) + "---\n" + example(MINIMAL), "documents[1].metadata.name", "defined twice in the file"),
])
def test_bad_v1_input_is_400_naming_the_field(api, text, path, message):
    response = import_file(api, text)
    assert response.status_code == 400, response.content
    assert path in response.json(), response.json()
    assert message in response.json()[path][0]
    assert not Cluster.objects.exists() and not Mirror.objects.exists() and not Event.objects.exists()


def test_v1beta2_with_spec_target_is_read_like_v1(api):
    text = example(MINIMAL).replace("apiVersion: kafka.strimzi.io/v1\n", "apiVersion: kafka.strimzi.io/v1beta2\n")
    response = import_file(api, text)
    assert response.status_code == 201, response.content
    assert Mirror.objects.get(name="my-mirror-maker-2").target.alias == "cluster-b"


def test_two_resources_sharing_their_target_import_together(api):
    second = example(MINIMAL).replace("name: my-mirror-maker-2", "name: second").replace("cluster-a", "cluster-c")
    response = import_file(api, example(MINIMAL) + "---\n" + second)
    assert response.status_code == 201, response.content
    assert response.json()["created"] == {"clusters": ["cluster-b", "cluster-a", "cluster-c"],
                                          "mirrors": ["my-mirror-maker-2", "second"]}


# -- export versions -----------------------------------------------------------------------------------------------
def test_export_is_v1_by_default_and_refuses_an_unknown_version(api):
    assert import_file(api, example(MINIMAL)).status_code == 201
    default = yaml.safe_load(api.get("/api/v1/mirrors/my-mirror-maker-2/export/").content)
    assert default["apiVersion"] == "kafka.strimzi.io/v1"
    assert default["spec"]["target"]["alias"] == "cluster-b" and "clusters" not in default["spec"]
    assert default["spec"]["mirrors"][0]["source"]["alias"] == "cluster-a"
    older = yaml.safe_load(api.get("/api/v1/mirrors/my-mirror-maker-2/export/?version=v1beta2").content)
    assert older["apiVersion"] == "kafka.strimzi.io/v1beta2" and older["spec"]["connectCluster"] == "cluster-b"
    unknown = api.get("/api/v1/mirrors/my-mirror-maker-2/export/?version=v2")
    assert unknown.status_code == 400 and "version" in unknown.json()
    properties = api.get("/api/v1/mirrors/my-mirror-maker-2/export/?format=properties&version=v1")
    assert properties.status_code == 400 and "only with format=strimzi" in properties.json()["version"][0]
