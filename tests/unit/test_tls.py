"""Throwaway certificates, and the broker properties of a secured cluster (no broker started)."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import javaproperties
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from devstack import kafka, tls
from devstack.kafka import KafkaCluster, new_cluster, new_secured_cluster


@pytest.fixture(scope="module")
def ca() -> tls.CertificateAuthority:
    return tls.make_ca("test-ca")


def load(pem: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem.encode())


def test_ca_is_self_signed_and_may_sign(ca):
    cert = load(ca.cert_pem)
    assert cert.subject == cert.issuer
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "test-ca"
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    cert.verify_directly_issued_by(cert)
    assert "test-ca" in repr(ca) and "PRIVATE" not in repr(ca)


def test_server_certificate_has_loopback_sans_and_is_signed_by_the_ca(ca):
    issued = tls.issue(ca, "broker")
    cert = load(issued.cert_pem)
    cert.verify_directly_issued_by(load(ca.cert_pem))
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in usages
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False


def test_client_certificate_is_for_client_auth_only(ca):
    cert = load(tls.issue(ca, "alice", server=False).cert_pem)
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert cert.subject.rfc4514_string() == "CN=alice"


def test_keys_are_unencrypted_pkcs8_matching_the_certificate(ca):
    issued = tls.issue(ca, "broker", sans=["kafka.example", "10.0.0.1"])
    assert issued.key_pem.startswith("-----BEGIN PRIVATE KEY-----")
    key = serialization.load_pem_private_key(issued.key_pem.encode(), password=None)
    public = load(issued.cert_pem).public_key()
    assert key.public_key().public_numbers() == public.public_numbers()
    assert issued.keystore_pem == issued.key_pem + issued.cert_pem
    sans = load(issued.cert_pem).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["kafka.example"]


def test_a_certificate_from_another_ca_does_not_verify(ca):
    other = tls.make_ca("other")
    with pytest.raises(Exception):  # noqa: B017 - InvalidSignature or ValueError, by key type
        load(tls.issue(other, "broker").cert_pem).verify_directly_issued_by(load(ca.cert_pem))


def properties(cluster: KafkaCluster) -> dict[str, str]:
    text = cluster._server_properties(Path(cluster.home) / "data")
    return javaproperties.loads(text)


def test_plain_cluster_properties_are_unchanged_by_security_support(tmp_path):
    cluster = new_cluster("plain", tmp_path)
    props = properties(cluster)
    assert props["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert not any(k.startswith(("ssl.", "listener.name.", "authorizer", "super.users")) for k in props)
    assert KafkaCluster.from_dict(cluster.to_dict()) == cluster
    assert cluster.listener_addresses == {"PLAINTEXT": cluster.bootstrap_servers}


def test_secured_cluster_properties(tmp_path):
    cluster = new_secured_cluster("sec", tmp_path, authorizer=True)
    props = properties(cluster)
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["listener.security.protocol.map"].endswith("SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                                           "SSL:SSL,MTLS:SSL")
    assert props["listener.name.mtls.ssl.client.auth"] == "required"
    assert props["listener.name.ssl.ssl.client.auth"] == "none"
    assert props["listener.name.sasl_ssl.sasl.enabled.mechanisms"] == "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"
    assert 'user_alice="alice-secret"' in props["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert props["ssl.keystore.type"] == props["ssl.truststore.type"] == "PEM"
    assert props["super.users"] == "User:ANONYMOUS;User:admin"
    state = json.loads(json.dumps(cluster.to_dict()))
    assert KafkaCluster.from_dict(state) == cluster
    assert state["listeners"]["SASL_SSL"] == cluster.listener_address("SASL_SSL")


def test_secured_cluster_uses_a_given_ca_and_issues_client_certificates(tmp_path, ca):
    cluster = new_secured_cluster("sec", tmp_path, ca=ca)
    cluster._ensure_tls()
    server = (cluster.tls_dir / "server.pem").read_text()
    assert "PRIVATE KEY" in server
    load(server[server.index("-----BEGIN CERTIFICATE-----"):]).verify_directly_issued_by(load(ca.cert_pem))
    assert cluster.ca_pem == ca.cert_pem and cluster.ca().common_name == "test-ca"
    load(cluster.issue_client_certificate("bob").cert_pem).verify_directly_issued_by(load(ca.cert_pem))
    assert oct((cluster.tls_dir / "ca-key.pem").stat().st_mode & 0o777) == "0o600"


def test_users_that_would_break_the_scram_argument_are_refused(tmp_path):
    with pytest.raises(ValueError, match="must be printable"):
        new_secured_cluster("sec", tmp_path, users={"alice": 'pass"word'})
    with pytest.raises(ValueError, match="must be printable"):
        KafkaCluster.from_dict({"alias": "x", "home": "/nowhere", "port": 1, "controller_port": 2,
                                "users": {"bob": "a,b"}})


def test_property_values_with_line_breaks_are_escaped(tmp_path):
    cluster = new_cluster("plain", tmp_path)
    cluster.extra_listeners = {"X": {"port": 1, "protocol": "PLAINTEXT", "properties": {"x.value": "a\nb\\c"}}}
    text = cluster._server_properties(tmp_path)
    assert "x.value=a\\nb\\\\c\n" in text


def test_the_cluster_id_is_read_from_the_meta_properties_kafka_writes(tmp_path):
    meta = tmp_path / "meta.properties"
    meta.write_text("#\n#Wed Nov 25 11:48:07 UTC 2026\nnode.id=1\ndirectory.id=Zx3-cQ\\=\\=\nversion=1\n"
                    "cluster.id=AbC-12_xyz\n")
    assert kafka._property(meta, "cluster.id") == "AbC-12_xyz"
    assert kafka._property(meta, "directory.id") == "Zx3-cQ=="
    assert kafka._property(meta, "missing") is None
