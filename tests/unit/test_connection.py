"""Bootstrap address parsing and client configuration for librdkafka and Java clients."""

import pytest

from mirrorcore.connection import ClusterConnection, parse_bootstrap_servers

CA = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:9092", ["127.0.0.1:9092"]),
        ("a.b:1,c:2", ["a.b:1", "c:2"]),
        ("[::1]:9092", ["[::1]:9092"]),
        ("broker-1.example.com:65535", ["broker-1.example.com:65535"]),
        ("kafka_0:9092", ["kafka_0:9092"]),
        (" a:1 , b:2 ", ["a:1", "b:2"]),
    ],
)
def test_valid_bootstrap_servers(value, expected):
    assert parse_bootstrap_servers(value) == expected


@pytest.mark.parametrize(
    "value",
    ["", "   ", "host", "host:0", "host:70000", "host:65536", "a:1,,b:2", "a:1,", "http://x:1", "host:port",
     ":9092", "::1:9092", "host:-1", "host:123456"],
)
def test_invalid_bootstrap_servers(value):
    with pytest.raises(ValueError):
        parse_bootstrap_servers(value)


def test_invalid_address_is_named_in_the_error():
    with pytest.raises(ValueError, match="'host'"):
        parse_bootstrap_servers("a:1,host")
    with pytest.raises(ValueError, match="1-65535"):
        parse_bootstrap_servers("host:70000")


def test_plaintext():
    conn = ClusterConnection("A", "a:9092", config={"client.id": "mirror"})
    assert not conn.uses_sasl
    assert not conn.uses_tls
    assert conn.librdkafka_config() == {"bootstrap.servers": "a:9092", "security.protocol": "PLAINTEXT"}
    assert conn.java_properties() == {
        "bootstrap.servers": "a:9092",
        "security.protocol": "PLAINTEXT",
        "client.id": "mirror",
    }


def test_sasl_ssl_scram_sha_512():
    conn = ClusterConnection("A", "a:9093", "SASL_SSL", "SCRAM-SHA-512", "mirror", 'pa"ss\\word')
    assert conn.uses_sasl
    assert conn.uses_tls
    assert conn.librdkafka_config() == {
        "bootstrap.servers": "a:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "mirror",
        "sasl.password": 'pa"ss\\word',
    }
    props = conn.java_properties()
    assert props["security.protocol"] == "SASL_SSL"
    assert props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert props["sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="mirror" password="pa\\"ss\\\\word";'
    )
    assert "ssl.truststore.type" not in props


def test_sasl_plaintext_plain_uses_plain_login_module():
    conn = ClusterConnection("A", "a:9092", "SASL_PLAINTEXT", "PLAIN", "u", "p")
    assert conn.uses_sasl
    assert not conn.uses_tls
    props = conn.java_properties()
    assert props["sasl.jaas.config"] == (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'
    )
    assert conn.librdkafka_config()["sasl.mechanism"] == "PLAIN"


def test_ssl_with_ca_pem():
    conn = ClusterConnection("A", "a:9093", "SSL", ca_pem=CA)
    assert conn.librdkafka_config() == {"bootstrap.servers": "a:9093", "security.protocol": "SSL", "ssl.ca.pem": CA}
    assert conn.java_properties() == {
        "bootstrap.servers": "a:9093",
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": CA,
    }


def test_mutual_tls_with_cert_and_key_pem():
    conn = ClusterConnection("A", "a:9093", "SSL", ca_pem=CA, cert_pem=CERT, key_pem=KEY)
    assert conn.librdkafka_config() == {
        "bootstrap.servers": "a:9093",
        "security.protocol": "SSL",
        "ssl.ca.pem": CA,
        "ssl.certificate.pem": CERT,
        "ssl.key.pem": KEY,
    }
    assert conn.java_properties() == {
        "bootstrap.servers": "a:9093",
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": CA,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": CERT,
        "ssl.keystore.key": KEY,
    }


def test_certificate_without_key_is_not_used():
    conn = ClusterConnection("A", "a:9093", "SSL", cert_pem=CERT)
    assert "ssl.certificate.pem" not in conn.librdkafka_config()
    assert "ssl.keystore.type" not in conn.java_properties()


def test_tls_material_ignored_without_tls():
    conn = ClusterConnection("A", "a:9092", "PLAINTEXT", ca_pem=CA, cert_pem=CERT, key_pem=KEY)
    assert "ssl.ca.pem" not in conn.librdkafka_config()
    assert not any(k.startswith("ssl.") for k in conn.java_properties())


def test_config_map_passes_through_to_java_properties_but_cannot_override_connection():
    conn = ClusterConnection(
        "A", "a:9092", config={"request.timeout.ms": "5000", "bootstrap.servers": "evil:1", "security.protocol": "SSL"}
    )
    props = conn.java_properties()
    assert props["request.timeout.ms"] == "5000"
    assert props["bootstrap.servers"] == "a:9092"
    assert props["security.protocol"] == "PLAINTEXT"


def test_secrets_are_not_in_repr():
    conn = ClusterConnection("A", "a:9093", "SASL_SSL", "PLAIN", "u", "hunter2", key_pem=KEY)
    assert "hunter2" not in repr(conn)
    assert "PRIVATE KEY" not in repr(conn)


def test_from_dict_ignores_unknown_keys_and_stringifies_config():
    conn = ClusterConnection.from_dict({
        "alias": "A",
        "bootstrap_servers": "a:9092",
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-256",
        "username": "u",
        "password": "p",
        "id": 17,
        "config": {"linger.ms": 5, "enable.idempotence": True},
    })
    assert conn == ClusterConnection(
        "A", "a:9092", "SASL_PLAINTEXT", "SCRAM-SHA-256", "u", "p",
        config={"linger.ms": "5", "enable.idempotence": "True"},
    )


def test_from_dict_without_config():
    assert ClusterConnection.from_dict({"alias": "A", "bootstrap_servers": "a:1", "config": None}).config == {}
