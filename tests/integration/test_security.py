"""Our client configurations against a real secured broker: SASL (SCRAM, PLAIN), TLS and mutual TLS.

One broker of this module's own (not the session devstack) has, next to PLAINTEXT, the listeners
SASL_SSL, SASL_PLAINTEXT, SSL (no client certificate) and MTLS (client certificate required), a
throwaway CA, SCRAM and PLAIN users, and the StandardAuthorizer with `admin` as a super user.
librdkafka clients get `ClusterConnection.librdkafka_config()`, Java clients (what Spark runs) get
`ClusterConnection.java_properties()` through a small Java program, and the REST check goes
through the API as an operator would.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import javaproperties
import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient

from controlplane.infra import maven
from devstack import tls
from devstack.kafka import KafkaCluster, new_secured_cluster
from mirrorcore.admin import ClusterError, KafkaAdmin, refused
from mirrorcore.connection import ClusterConnection

# Every test uses the database (only the API tests need it): pytest-django runs database tests first,
# and a module split across that ordering would start its broker twice.
pytestmark = pytest.mark.django_db

USERS = {"alice": "alice-secret", "admin": "admin-secret"}
STARTED_IN: dict[str, float] = {}


@pytest.fixture(scope="module")
def secured(tmp_path_factory) -> Iterator[KafkaCluster]:
    cluster = new_secured_cluster("secured", tmp_path_factory.mktemp("secured"), users=USERS, authorizer=True)
    # One random id in 64 starts with '-' (base64url), which StorageTool once took for an option: always test it.
    cluster.cluster_id = "-" + cluster.cluster_id[1:]
    started = time.monotonic()
    try:
        cluster.start(heap="512m")
        STARTED_IN["secured"] = time.monotonic() - started
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def client_cert(secured) -> tls.IssuedCertificate:
    return secured.issue_client_certificate("alice")


def connection(cluster: KafkaCluster, listener: str, alias: str = "secured", **fields) -> ClusterConnection:
    protocol = {"MTLS": "SSL"}.get(listener, listener)
    defaults = {"ca_pem": cluster.ca_pem} if protocol.endswith("SSL") else {}
    return ClusterConnection(alias=alias, bootstrap_servers=cluster.listener_address(listener),
                             security_protocol=protocol, **(defaults | fields))


def scram(cluster: KafkaCluster, user: str = "alice", mechanism: str = "SCRAM-SHA-512", **fields) -> ClusterConnection:
    return connection(cluster, "SASL_SSL", **({"sasl_mechanism": mechanism, "username": user, "password": USERS[user]}
                                              | fields))


def first_client_error(config: dict[str, str], timeout: float = 10.0) -> KafkaError | None:
    """The first connection error librdkafka reports to the application for `config`."""
    errors: list[KafkaError] = []
    admin = AdminClient(config | {"error_cb": errors.append, "log_level": 0})
    future = admin.describe_cluster(request_timeout=timeout)
    deadline = time.monotonic() + timeout
    while not errors and not future.done() and time.monotonic() < deadline:
        admin.poll(0.1)
    return errors[0] if errors else None


# -- the broker ------------------------------------------------------------------------------


def test_secured_cluster_survives_its_state_file(secured, figures):
    figures(f"secured broker (5 listeners, SCRAM users, authorizer) answered {STARTED_IN['secured']:.1f}s "
            "after start")
    restored = KafkaCluster.from_dict(secured.to_dict())
    assert restored.running()
    assert restored.listener_addresses == secured.listener_addresses
    assert set(restored.listener_addresses) == {"PLAINTEXT", "SASL_SSL", "SASL_PLAINTEXT", "SSL", "MTLS"}
    assert restored.users == USERS and restored.authorizer and restored.super_users == ["admin"]
    data = Path(secured.home) / "data"
    assert restored._server_properties(data) == secured._server_properties(data)
    assert secured.to_dict()["listeners"]["MTLS"] == secured.listener_address("MTLS")
    with pytest.raises(KeyError, match="no listener 'SASL'"):
        secured.listener_address("SASL")


# -- librdkafka: ClusterConnection.librdkafka_config() ---------------------------------------------


@pytest.mark.parametrize(
    ("listener", "fields"),
    [
        ("SASL_SSL", {"sasl_mechanism": "SCRAM-SHA-512", "username": "alice", "password": "alice-secret"}),
        ("SASL_SSL", {"sasl_mechanism": "SCRAM-SHA-256", "username": "alice", "password": "alice-secret"}),
        ("SASL_SSL", {"sasl_mechanism": "PLAIN", "username": "alice", "password": "alice-secret"}),
        ("SASL_PLAINTEXT", {"sasl_mechanism": "PLAIN", "username": "alice", "password": "alice-secret"}),
        ("SASL_PLAINTEXT", {"sasl_mechanism": "SCRAM-SHA-512", "username": "admin", "password": "admin-secret"}),
        ("SSL", {}),
    ],
    ids=["sasl_ssl-scram512", "sasl_ssl-scram256", "sasl_ssl-plain", "sasl_plaintext-plain",
         "sasl_plaintext-scram512", "ssl-server-auth-only"],
)
def test_librdkafka_connects(secured, listener, fields):
    info = KafkaAdmin(connection(secured, listener, **fields), timeout=15).describe()
    assert info.brokers == 1 and info.cluster_id == secured.cluster_id


def test_librdkafka_connects_with_a_client_certificate(secured, client_cert):
    conn = connection(secured, "MTLS", cert_pem=client_cert.cert_pem, key_pem=client_cert.key_pem)
    assert KafkaAdmin(conn, timeout=15).describe().brokers == 1


def test_the_mtls_listener_refuses_a_client_without_certificate(secured):
    error = first_client_error(connection(secured, "MTLS").librdkafka_config())
    assert error is not None and "certificate" in error.str()


def test_the_broker_rejects_a_wrong_password_as_an_authentication_failure(secured):
    error = first_client_error(scram(secured, password="wrong").librdkafka_config())
    assert error is not None and error.code() == KafkaError._AUTHENTICATION
    assert "Authentication failed" in error.str()


def test_a_broker_certificate_from_another_ca_fails_verification(secured):
    error = first_client_error(scram(secured, ca_pem=tls.make_ca("not-the-brokers-ca").cert_pem).librdkafka_config())
    # librdkafka says _SSL, or _TRANSPORT when it meets the failed handshake on the socket's read
    assert error is not None and error.code() in (KafkaError._SSL, KafkaError._TRANSPORT), error
    assert "certificate verify failed" in error.str() and refused(error)


def test_an_admin_given_another_ca_gives_up_at_once(secured, figures):
    other_ca = scram(secured, ca_pem=tls.make_ca("not-the-brokers-ca-either").cert_pem)
    started = time.monotonic()
    with pytest.raises(ClusterError, match="certificate verify failed"):
        KafkaAdmin(other_ca, timeout=30).describe()
    elapsed = time.monotonic() - started
    figures(f"admin given another CA: refused after {elapsed:.1f}s (timeout 30 s)")
    assert elapsed < 10


# -- the authorizer ------------------------------------------------------------------------------


def test_authorizer_lets_super_users_create_topics_and_denies_others(secured, client_cert):
    with pytest.raises(ClusterError, match="AUTHORIZATION_FAILED"):
        KafkaAdmin(scram(secured, "alice"), timeout=15).create_topics({"denied-to-alice": 1}, 1)
    with pytest.raises(ClusterError, match="AUTHORIZATION_FAILED"):  # CN=alice is User:alice
        KafkaAdmin(connection(secured, "MTLS", cert_pem=client_cert.cert_pem, key_pem=client_cert.key_pem),
                   timeout=15).create_topics({"denied-to-alice-cert": 1}, 1)
    assert KafkaAdmin(scram(secured, "admin"), timeout=15).create_topics({"created-by-admin": 1}, 1) == [
        "created-by-admin"]
    admin_cert = secured.issue_client_certificate("admin")  # CN=admin maps to the super user User:admin
    mtls_admin = connection(secured, "MTLS", cert_pem=admin_cert.cert_pem, key_pem=admin_cert.key_pem)
    assert KafkaAdmin(mtls_admin, timeout=15).create_topics({"created-by-admin-cert": 1}, 1) == [
        "created-by-admin-cert"]


# -- Java clients: ClusterConnection.java_properties() -------------------------------------------

JAVA_ADMIN_CHECK = """\
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;

/** Reads client properties as Spark's Kafka source and our producer get them; describes the cluster. */
public class AdminCheck {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (Reader reader = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
            props.load(reader);
        }
        try (Admin admin = Admin.create(props)) {
            DescribeClusterResult result = admin.describeCluster();
            System.out.println("nodes=" + result.nodes().get(30, TimeUnit.SECONDS).size());
            System.out.println("cluster_id=" + result.clusterId().get(30, TimeUnit.SECONDS));
        }
    }
}
"""


def java_properties_text(props: dict[str, str]) -> str:
    """`props` in java.util.Properties syntax: multi-line PEM values, '=', ':' and '#' survive `load`."""
    return "".join(javaproperties.join_key_value(key, value) + "\n" for key, value in props.items())


@pytest.fixture(scope="module")
def java_admin_check(tmp_path_factory):
    """Runs AdminCheck (compiled once against the broker's kafka-clients) on a properties dict."""
    classpath = ":".join(str(jar) for jar in maven.kafka_broker_classpath())
    work = tmp_path_factory.mktemp("java")
    (work / "AdminCheck.java").write_text(JAVA_ADMIN_CHECK)
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not installed")
    subprocess.run([javac, "-cp", classpath, "-d", str(work), str(work / "AdminCheck.java")], check=True,
                   capture_output=True, text=True, timeout=120)

    def run(props: dict[str, str], name: str) -> subprocess.CompletedProcess:
        path = work / f"{name}.properties"
        path.write_text(java_properties_text(props | {"request.timeout.ms": "10000",
                                                      "default.api.timeout.ms": "20000"}))
        return subprocess.run(
            ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", f"{work}:{classpath}",
             "AdminCheck", str(path)],
            capture_output=True, text=True, timeout=90,
        )

    return run


def test_java_properties_escaping():
    # what PEM and JAAS values contain; the Java tests below read real ones back with Properties.load
    text = java_properties_text({"a key": " x=y:z#!\\\n-----END-----\n"})
    assert text == "a\\ key=\\ x\\=y\\:z\\#\\!\\\\\\n-----END-----\\n\n"


@pytest.mark.parametrize("case", ["sasl_ssl-scram512", "sasl_plaintext-plain", "ssl", "mtls"])
def test_java_client_connects_with_java_properties(secured, client_cert, java_admin_check, case, figures):
    conn = {
        "sasl_ssl-scram512": lambda: scram(secured),
        "sasl_plaintext-plain": lambda: connection(secured, "SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                                                   username="alice", password="alice-secret"),
        "ssl": lambda: connection(secured, "SSL"),
        "mtls": lambda: connection(secured, "MTLS", cert_pem=client_cert.cert_pem, key_pem=client_cert.key_pem),
    }[case]()
    started = time.monotonic()
    result = java_admin_check(conn.java_properties(), case)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"cluster_id={secured.cluster_id}" in result.stdout
    assert "nodes=1" in result.stdout
    if case == "mtls":
        figures(f"Java AdminClient over mTLS: {time.monotonic() - started:.1f}s including JVM start")


def test_java_client_with_a_wrong_password_fails_authentication(secured, java_admin_check):
    result = java_admin_check(scram(secured, password="wrong").java_properties(), "wrong-password")
    assert result.returncode != 0
    assert "SaslAuthenticationException" in result.stderr, result.stderr[-2000:]


def test_java_client_without_a_certificate_is_refused_by_the_mtls_listener(secured, java_admin_check):
    result = java_admin_check(connection(secured, "MTLS").java_properties(), "no-certificate")
    assert result.returncode != 0
    assert "SslAuthenticationException" in result.stderr or "SSLHandshakeException" in result.stderr, (
        result.stderr[-2000:])


# -- the REST check endpoint -------------------------------------------------------------------


def create_cluster(api, alias: str, conn: ClusterConnection, **overrides) -> None:
    body = {"alias": alias, "bootstrap_servers": conn.bootstrap_servers, "security_protocol": conn.security_protocol,
            "sasl_mechanism": conn.sasl_mechanism, "username": conn.username, "password": conn.password,
            "ca_pem": conn.ca_pem, "cert_pem": conn.cert_pem, "key_pem": conn.key_pem} | overrides
    response = api.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 201, response.json()


def check(api, alias: str) -> tuple[dict, float]:
    started = time.monotonic()
    body = api.post(f"/api/v1/clusters/{alias}/check/").json()
    return body, time.monotonic() - started


def test_check_endpoint_reaches_a_sasl_ssl_scram_cluster(api, secured):
    create_cluster(api, "scram", scram(secured, alias="scram"))
    body, _ = check(api, "scram")
    assert body["reachable"] is True, body
    assert body["brokers"] == 1 and body["cluster_id"] == secured.cluster_id


def test_check_endpoint_reaches_an_mtls_cluster(api, secured, client_cert):
    create_cluster(api, "mtls", connection(secured, "MTLS", alias="mtls", cert_pem=client_cert.cert_pem,
                                           key_pem=client_cert.key_pem))
    assert api.get("/api/v1/clusters/mtls/").json()["has_key"] is True
    body, _ = check(api, "mtls")
    assert body["reachable"] is True, body
    assert body["brokers"] == 1


def test_check_endpoint_with_a_wrong_password_is_unreachable_for_authentication(api, secured):
    create_cluster(api, "badpass", scram(secured, alias="badpass", password="wrong-password"))
    body, elapsed = check(api, "badpass")
    assert body["reachable"] is False
    assert "badpass" in body["error"] and elapsed <= 10.5
    assert "authentication" in body["error"].lower(), body["error"]
    assert "wrong-password" not in body["error"]


def test_check_endpoint_with_the_wrong_ca_fails_tls_verification(api, secured):
    create_cluster(api, "badca", scram(secured, alias="badca", ca_pem=tls.make_ca("someone-else").cert_pem))
    body, elapsed = check(api, "badca")
    assert body["reachable"] is False
    assert "badca" in body["error"] and elapsed <= 10.5
    assert "ssl" in body["error"].lower(), body["error"]
    assert "certificate verify failed" in body["error"]
