"""What an admin (or an imported file) may not pass on to Spark, Kafka clients or the key store, and the bad
inputs that were refused before: each is a 400 naming the field, and nothing is stored, queued or started.

The override policy (mirrorcore/overrides) is tried through the REST API, through import, through the
bodies the dashboard's forms send, at submission (a mirror stored before the policy) and on the
spark-submit command line; certificates and keys through the cluster endpoints.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.test import Client, override_settings

from mirrorcore.overrides import OverridePolicy, kafka_system_properties
from mirrors.models import Cluster, Connector, Deployment, Event, Mirror
from mirrors.services import mirrors as mirror_service
from mirrors.services import runtime
from mirrors.services.mirrors import create_mirror
from tests import pem
from tests.api.test_engine_supervision import ClusterManager, passes
from tests.fakes import FakeRedis

pytestmark = pytest.mark.django_db

KAFKA_RESTRICTIONS = kafka_system_properties(OverridePolicy())


@pytest.fixture
def started(monkeypatch):
    """Every supervision pass queued and every process spawned: a refused request must add none."""
    calls: list[str] = []
    monkeypatch.setattr(mirror_service, "reconcile_soon", lambda: calls.append("reconcile"))
    monkeypatch.setattr(runtime.processes, "spawn", lambda *a, **k: calls.append("spawn"))
    return calls


@pytest.fixture
def world(api, started):
    for alias in ("east", "west"):
        assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"},
                        format="json").status_code == 201
    assert api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west"},
                    format="json").status_code == 201
    started.clear()
    return api


def snapshot() -> dict:
    """Everything a refused request must leave as it was."""
    return {
        "clusters": {c.alias: (c.config, c.ca_pem, c.cert_pem, c.key_pem) for c in Cluster.objects.all()},
        "mirrors": {m.name: (m.generation, m.spark, m.topics) for m in Mirror.objects.all()},
        "connectors": {(c.mirror.name, c.kind): (c.config, c.tasks_max) for c in Connector.objects.all()},
        "events": Event.objects.count(),
        "deployments": Deployment.objects.count(),
    }


def refused(started, before: dict, response, *path: str) -> list[str]:
    """Asserts a 400 whose errors hold `path`, with nothing stored, queued or started; returns the messages."""
    assert response.status_code == 400, response.content
    errors = response.json()
    for step in path:
        assert step in errors, (step, errors)
        errors = errors[step]
    assert snapshot() == before, "a refused request changed what is stored"
    assert started == [], "a refused request queued a supervision pass or started a process"
    return errors if isinstance(errors, list) else [errors]


# -- Spark properties ------------------------------------------------------------------------------------------
JVM_OPTIONS = ["-Dx=$(id)", "-XX:OnOutOfMemoryError=touch /tmp/pwned", "-XX:OnError=id", "-javaagent:/tmp/agent.jar",
               "-agentpath:/tmp/libagent.so"]
RUNS_CODE = ["spark.executor.extraJavaOptions", "spark.driver.extraClassPath", "spark.executor.extraClassPath",
             "spark.driver.extraLibraryPath", "spark.executor.extraLibraryPath", "spark.yarn.am.extraJavaOptions",
             "spark.plugins", "spark.extraListeners", "spark.sql.streaming.streamingQueryListeners",
             "spark.jars.packages", "spark.archives", "spark.executorEnv.LD_PRELOAD", "spark.pyspark.python",
             "spark.redaction.regex"]


@pytest.mark.parametrize("option", JVM_OPTIONS)
def test_driver_jvm_options_are_refused_naming_key_and_setting(world, started, option):
    before = snapshot()
    response = world.patch("/api/v1/mirrors/m1/", {"spark": {"conf": {"spark.driver.extraJavaOptions": option}}},
                           format="json")
    [message] = refused(started, before, response, "spark", "conf.spark.driver.extraJavaOptions")
    assert message.startswith("spark.driver.extraJavaOptions: refused because JVM options can run commands")
    assert "MIRRORPLANE_SPARK_CONF_POLICY=all" in message and "MIRRORPLANE_SPARK_CONF_ALLOW" in message


@pytest.mark.parametrize("key", RUNS_CODE)
def test_spark_keys_that_run_code_are_refused_on_create_and_update(world, started, key):
    before = snapshot()
    body = {"name": "m2", "source": "west", "target": "east", "spark": {"conf": {key: "/tmp/x"}}}
    [message] = refused(started, before, world.post("/api/v1/mirrors/", body, format="json"), "spark", f"conf.{key}")
    assert message.startswith(f"{key}: refused because ") and "MIRRORPLANE_SPARK_CONF_POLICY=all" in message
    response = world.patch("/api/v1/mirrors/m1/", {"spark": {"conf": {key: "/tmp/x"}}}, format="json")
    refused(started, before, response, "spark", f"conf.{key}")


def test_an_unlisted_spark_key_is_refused_and_the_installation_can_list_it(world, started):
    before = snapshot()
    body = {"spark": {"conf": {"spark.speculation.multiplier": "3"}}}
    [message] = refused(started, before, world.patch("/api/v1/mirrors/m1/", body, format="json"),
                        "spark", "conf.spark.speculation.multiplier")
    assert "MIRRORPLANE_SPARK_CONF_ALLOW=spark.speculation.multiplier" in message
    with override_settings(SPARK_CONF_ALLOW=("spark.speculation.multiplier",)):
        assert world.patch("/api/v1/mirrors/m1/", body, format="json").status_code == 200


def test_with_the_policy_at_all_jvm_options_are_accepted_and_reach_spark_submit(world):
    with override_settings(SPARK_CONF_POLICY="all"):
        response = world.patch("/api/v1/mirrors/m1/", {"spark": {"conf": {
            "spark.driver.extraJavaOptions": "-Xss4m"}}}, format="json")
        assert response.status_code == 200, response.content
        argv = runtime.submit_argv(Mirror.objects.get(name="m1"), Path("/c/app.json"), [])
    assert f"spark.driver.extraJavaOptions=-Xss4m {' '.join(KAFKA_RESTRICTIONS)}" in argv, \
        "the mirror's options first, Kafka's restrictions last (they win)"


def test_allowed_tuning_keys_still_reach_spark_submit_in_both_modes(world, tmp_path):
    conf = {"spark.sql.streaming.pollingDelay": "250ms", "spark.executor.memoryOverhead": "512m",
            "spark.task.maxFailures": 8, "spark.driver.host": "127.0.0.1"}
    response = world.patch("/api/v1/mirrors/m1/", {"spark": {"conf": conf}}, format="json")
    assert response.status_code == 200, response.content
    mirror = Mirror.objects.get(name="m1")
    client_mode = runtime.submit_argv(mirror, Path("/c/app.json"), [Path("/j/w.jar")])
    config = runtime.write_app_config(mirror, tmp_path / "app.json", work_dir=".")
    cluster_mode = runtime.cluster_submit_argv(mirror, archive="hdfs://nn/a.zip", code=Path("/c.zip"), config=config,
                                               tags=["t"], python="/venv/bin/python")
    for argv in (client_mode, cluster_mode):
        for key, value in conf.items():
            assert f"{key}={value}" in argv, (key, argv)
        for name in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
            [options] = [a.split("=", 1)[1] for a in argv if a.startswith(f"{name}=")]
            assert options.split()[-3:] == KAFKA_RESTRICTIONS, "drivers and executors get Kafka's restrictions"
    shipped = json.loads(config.read_text())
    assert shipped["spark_conf"]["spark.sql.streaming.pollingDelay"] == "250ms"
    assert shipped["overrides"]["spark_conf"] == "allowlist", "the driver checks again with the same policy"


# -- Kafka client properties -----------------------------------------------------------------------------------
CLIENT_OVERRIDES = [
    ("source", "consumer.interceptor.classes", "loads classes"),
    ("source", "producer.override.metric.reporters", "loads classes"),
    ("source", "producer.override.partitioner.class", "loads classes"),
    ("checkpoint", "admin.sasl.login.class", "loads classes"),
    ("source", "consumer.sasl.client.callback.handler.class", "loads classes"),
    ("heartbeat", "producer.override.sasl.login.callback.handler.class", "loads classes"),
    ("source", "consumer.config.providers", "loads classes"),
    ("source", "admin.sasl.jaas.config", "login module"),
    ("checkpoint", "consumer.sasl.oauthbearer.token.endpoint.url", "URL"),
    ("source", "admin.plugin.library.paths", "libraries"),
    ("source", "consumer.bootstrap.servers", "cluster's own fields"),
]


@pytest.mark.parametrize(("kind", "key", "why"), CLIENT_OVERRIDES)
def test_connector_client_overrides_that_load_code_are_refused(world, started, kind, key, why):
    before = snapshot()
    body = {"connectors": {kind: {"config": {key: "com.example.Evil"}}}}
    [message] = refused(started, before, world.patch("/api/v1/mirrors/m1/", body, format="json"),
                        "connectors", kind, "config")
    assert message.startswith(f"{key}: refused because ") and why in message
    assert "MIRRORPLANE_CLIENT_CONFIG_POLICY=all" in message and "MIRRORPLANE_CLIENT_CONFIG_ALLOW=" in message


@pytest.mark.parametrize("key", ["interceptor.classes", "metric.reporters", "sasl.login.class", "config.providers",
                                 "sasl.oauthbearer.jwks.endpoint.url", "producer.partitioner.class",
                                 "ssl.truststore.location"])
def test_cluster_config_that_loads_code_is_refused_on_create_and_update(world, started, key):
    before = snapshot()
    response = world.post("/api/v1/clusters/", {"alias": "north", "bootstrap_servers": "north:9092",
                                                "config": {key: "com.example.Evil"}}, format="json")
    [message] = refused(started, before, response, "config")
    assert message.startswith(f"{key}: refused because ") and "MIRRORPLANE_CLIENT_CONFIG_POLICY=all" in message
    refused(started, before, world.patch("/api/v1/clusters/east/", {"config": {key: "x"}}, format="json"), "config")


def test_tuning_client_properties_are_accepted_and_all_lets_everything_through(world):
    ok = {"connectors": {"source": {"config": {"producer.override.linger.ms": "10", "consumer.fetch.max.bytes": "1"}}}}
    assert world.patch("/api/v1/mirrors/m1/", ok, format="json").status_code == 200
    assert world.patch("/api/v1/clusters/east/", {"config": {"request.timeout.ms": "20000"}},
                       format="json").status_code == 200
    evil = {"connectors": {"source": {"config": {"consumer.interceptor.classes": "com.example.Evil"}}}}
    with override_settings(CLIENT_CONFIG_POLICY="all"):
        assert world.patch("/api/v1/mirrors/m1/", evil, format="json").status_code == 200
    with override_settings(CLIENT_CONFIG_POLICY="none"):
        response = world.patch("/api/v1/clusters/west/", {"config": {"request.timeout.ms": "1"}}, format="json")
        assert response.status_code == 400 and "MIRRORPLANE_CLIENT_CONFIG_POLICY=none" in response.json()["config"][0]


# -- import ----------------------------------------------------------------------------------------------------
STRIMZI = """apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata:
  name: evil
  annotations:
    mirrorplane.io/spark: '{{"conf": {spark}}}'
spec:
  clusters:
  - alias: north
    bootstrapServers: north:9092
    config: {cluster}
  - {{alias: south, bootstrapServers: "south:9092"}}
  mirrors:
  - sourceCluster: north
    targetCluster: south
    sourceConnector:
      config: {connector}
"""


def strimzi(spark: dict | None = None, cluster: dict | None = None, connector: dict | None = None) -> str:
    return STRIMZI.format(spark=json.dumps(spark or {}), cluster=json.dumps(cluster or {}),
                          connector=json.dumps(connector or {}))


@pytest.mark.parametrize(("text", "path", "key"), [
    (strimzi(spark={"spark.driver.extraJavaOptions": "-XX:OnError=id"}),
     "metadata.annotations.mirrorplane.io/spark.conf.spark.driver.extraJavaOptions", "spark.driver.extraJavaOptions"),
    (strimzi(spark={"spark.executor.extraClassPath": "/tmp"}),
     "metadata.annotations.mirrorplane.io/spark.conf.spark.executor.extraClassPath", "spark.executor.extraClassPath"),
    (strimzi(cluster={"metric.reporters": "com.example.Evil"}), "spec.clusters[0].config", "metric.reporters"),
    (strimzi(connector={"consumer.interceptor.classes": "com.example.Evil"}), "spec.mirrors[0].sourceConnector.config",
     "consumer.interceptor.classes"),
])
@pytest.mark.parametrize("dry_run", ["", "?dry_run=true"])
def test_import_refuses_what_the_api_refuses(api, started, text, path, key, dry_run):
    before = snapshot()
    response = api.post(f"/api/v1/import/{dry_run}", data=text.encode(), content_type="application/yaml")
    messages = refused(started, before, response, path)
    assert any(m.startswith(f"{key}: refused because ") for m in messages), messages
    assert not Cluster.objects.exists() and not Mirror.objects.exists()


def test_import_of_mm2_properties_refuses_client_classes(api, started):
    text = ("clusters = north, south\nnorth.bootstrap.servers = north:9092\nsouth.bootstrap.servers = south:9092\n"
            "north->south.enabled = true\nnorth->south.producer.override.interceptor.classes = com.example.Evil\n")
    before = snapshot()
    response = api.post("/api/v1/import/", data=text.encode(), content_type="text/plain")
    assert response.status_code == 400, response.content
    assert "producer.override.interceptor.classes: refused because" in json.dumps(response.json())
    assert snapshot() == before and started == []


# -- the dashboard's forms -------------------------------------------------------------------------------------
def test_the_forms_show_the_policy_and_have_a_place_for_its_errors(admin_user, world):
    browser = Client()
    browser.force_login(admin_user)
    for path in ("/mirrors/new/", "/mirrors/m1/edit/"):
        page = browser.get(path).content.decode()
        assert 'id="f-spark_conf"' in page and 'data-error-for="spark.conf"' in page
        assert "MIRRORPLANE_SPARK_CONF_POLICY=all" in page and "MIRRORPLANE_SPARK_CONF_ALLOW" in page
        assert "MIRRORPLANE_CLIENT_CONFIG_POLICY=all" in page and "JVM options" in page
        assert "<code>spark.sql.streaming.pollingDelay</code>" in page
        assert 'id="mirror-spark"' in page
    cluster_page = browser.get("/clusters/east/edit/").content.decode()
    assert "MIRRORPLANE_CLIENT_CONFIG_POLICY=all" in cluster_page and "<code>linger.ms</code>" in cluster_page
    assert "<code>interceptor.classes</code>" not in cluster_page
    with override_settings(SPARK_CONF_POLICY="all"):
        assert "can run code as the worker" in browser.get("/mirrors/new/").content.decode()


def test_the_mirror_forms_body_gets_its_errors_under_the_fields_path(world, started):
    """The body mirrors.js sends (spark resources kept, properties from the textareas): the 400 flattens to
    `spark.conf.<key>` and `connectors.source.config`, which the page has error slots for."""
    before = snapshot()
    body = {"source": "east", "target": "west", "topics": ".*", "topics_exclude": "", "groups": ".*",
            "groups_exclude": "", "replication_policy": "default", "separator": ".",
            "connectors": {"source": {"config": {"consumer.interceptor.classes": "x"}, "tasks_max": 1,
                                      "auto_restart": {"enabled": True, "max_restarts": None}}},
            "spark": {"conf": {"spark.driver.extraJavaOptions": "-XX:OnError=id"}}}
    response = world.patch("/api/v1/mirrors/m1/", body, format="json")
    errors = response.json()
    refused(started, before, response, "spark")
    assert list(errors["spark"]) == ["conf.spark.driver.extraJavaOptions"]
    assert errors["connectors"]["source"]["config"][0].startswith("consumer.interceptor.classes: refused")


# -- submission and the driver ---------------------------------------------------------------------------------
def test_a_mirror_stored_before_the_policy_is_never_submitted():
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092", config={"metric.reporters": "x.Evil"})
    create_mirror(name="m", source=east, target=west, spark={"master": "yarn", "conf": {
        "spark.driver.extraJavaOptions": "-XX:OnOutOfMemoryError=id"}})
    engine, redis = ClusterManager(), FakeRedis()
    passes(engine, redis, 2)
    assert engine.submitted == [] and engine.apps == {}
    deployment = Deployment.objects.get(mirror_name="m")
    assert deployment.last_error.startswith("refused by this installation's override policy: ")
    assert "spark.conf: spark.driver.extraJavaOptions: refused because JVM options" in deployment.last_error
    assert "clusters.west.config: metric.reporters: refused because" in deployment.last_error
    with override_settings(SPARK_CONF_POLICY="all", CLIENT_CONFIG_POLICY="all"):
        Deployment.objects.filter(mirror_name="m").update(next_attempt_at=None)
        passes(engine, redis)
    assert len(engine.submitted) == 1, "the installation allowed it: submitted"


# -- certificates and keys -------------------------------------------------------------------------------------
def expired_certificate() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "old-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=30))
            .not_valid_after(now - datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


NOT_BASE64 = "-----BEGIN CERTIFICATE-----\nthis is not base64 at all!\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(("fields", "field", "expected"), [
    ({"ca_pem": NOT_BASE64}, "ca_pem", "not base64"),
    ({"ca_pem": "my CA certificate"}, "ca_pem", "not PEM"),
    ({"ca_pem": "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----"}, "ca_pem",
     "not an X.509 certificate"),
    ({"ca_pem": "expired"}, "ca_pem", "expired on"),
    ({"ca_pem": "key"}, "ca_pem", "contains a private key"),
    ({"cert_pem": NOT_BASE64, "key_pem": "key"}, "cert_pem", "not base64"),
    ({"cert_pem": "cert", "key_pem": "-----BEGIN PRIVATE KEY-----\n%%%\n-----END PRIVATE KEY-----"}, "key_pem",
     "not base64"),
    ({"cert_pem": "cert", "key_pem": "other key"}, "key_pem", "does not match the client certificate"),
])
def test_broken_certificates_and_keys_are_refused_when_stored(world, started, fields, field, expected):
    stand_ins = {"expired": expired_certificate(), "key": pem.client().key_pem, "cert": pem.client().cert_pem,
                 "other key": pem.client("someone-else").key_pem}
    body = {"alias": "north", "bootstrap_servers": "north:9093", "security_protocol": "SSL",
            **{k: stand_ins.get(v, v) for k, v in fields.items()}}
    before = snapshot()
    [message] = refused(started, before, world.post("/api/v1/clusters/", body, format="json"), field)
    assert expected in message
    assert pem.key_body(pem.client().key_pem) not in message


def test_a_valid_mtls_cluster_is_stored_and_a_foreign_key_cannot_replace_its_own(world, started):
    issued = pem.client()
    response = world.post("/api/v1/clusters/", {
        "alias": "north", "bootstrap_servers": "north:9093", "security_protocol": "SSL", "ca_pem": pem.ca().cert_pem,
        "cert_pem": issued.cert_pem + pem.ca().cert_pem, "key_pem": issued.key_pem}, format="json")
    assert response.status_code == 201, response.content
    before = snapshot()
    foreign = world.patch("/api/v1/clusters/north/", {"key_pem": pem.client("someone-else").key_pem}, format="json")
    [message] = refused(started, before, foreign, "key_pem")
    assert "does not match the client certificate (CN=mirror)" in message
    other_cert = world.patch("/api/v1/clusters/north/", {"cert_pem": pem.client("someone-else").cert_pem},
                             format="json")
    refused(started, before, other_cert, "cert_pem")
    assert world.patch("/api/v1/clusters/north/", {"config": {"acks": "all"}}, format="json").status_code == 200


# -- inputs refused before: still 400, still naming the field, still nothing stored ---------------------------
@pytest.mark.parametrize(("method", "url", "body", "path"), [
    ("post", "/api/v1/mirrors/", {"name": "m2", "source": "east", "target": "west", "topics": "pay(ments"}, "topics"),
    ("post", "/api/v1/mirrors/", {"name": "m2", "source": "nope", "target": "west"}, "source"),
    ("post", "/api/v1/mirrors/", {"name": "m2", "source": "east", "target": "east"}, "target"),
    ("post", "/api/v1/clusters/", {"alias": "north", "bootstrap_servers": "north:port"}, "bootstrap_servers"),
    ("post", "/api/v1/clusters/", {"alias": "north", "bootstrap_servers": "north"}, "bootstrap_servers"),
    ("post", "/api/v1/mirrors/", {"name": "m" * 64, "source": "west", "target": "east"}, "name"),
    ("post", "/api/v1/clusters/", {"alias": "n" * 64, "bootstrap_servers": "n:1"}, "alias"),
    ("patch", "/api/v1/mirrors/m1/", {"connectors": {"source": {"tasks_max": 0}}}, "connectors"),
    ("patch", "/api/v1/mirrors/m1/", {"connectors": {"source": {"tasks_max": 10**12}}}, "connectors"),
    ("patch", "/api/v1/mirrors/m1/", {"spark": {"master": "local[2] --conf spark.x=1"}}, "spark"),
    ("patch", "/api/v1/mirrors/m1/", {"spark": {"master": "spark://h:7077 --jars /tmp/x.jar"}}, "spark"),
])
def test_bad_inputs_refused_before_still_are(world, started, method, url, body, path):
    before = snapshot()
    refused(started, before, getattr(world, method)(url, body, format="json"), path)


def test_malformed_yaml_invalid_json_and_unknown_series_or_range_are_refused(world, started):
    before = snapshot()
    yaml = world.post("/api/v1/import/", data=b"apiVersion: x\nkind: [\n", content_type="application/yaml")
    assert refused(started, before, yaml, "content")[0].startswith("line 3: invalid YAML")
    broken = world.post("/api/v1/mirrors/", data=b'{"name": "m2", "source": ', content_type="application/json")
    assert "JSON parse error" in refused(started, before, broken, "detail")[0]
    series = world.get("/api/v1/mirrors/m1/metrics/", {"series": "nope"})
    assert 'unknown series "nope"' in refused(started, before, series, "series")[0]
    graphs = world.get("/api/v1/mirrors/m1/graphs/", {"range": "2h"})
    assert "15m" in refused(started, before, graphs, "range")[0]
