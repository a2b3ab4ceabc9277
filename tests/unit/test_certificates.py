"""Certificates and keys are parsed when a cluster is stored: what is wrong is said, the key never quoted."""

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID

from mirrors.services.certificates import PemError, certificates, key_matches, private_key
from tests import pem

NOW = datetime.datetime.now(datetime.UTC)


def self_signed(not_before: datetime.datetime, not_after: datetime.datetime, name: str = "old") -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(1).not_valid_before(not_before).not_valid_after(not_after).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def key_pem(key, encoding=serialization.PrivateFormat.PKCS8, password: bytes | None = None) -> str:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, encoding, encryption).decode()


def error_of(check, text: str) -> str:
    with pytest.raises(PemError) as raised:
        check(text)
    return str(raised.value)


def test_a_ca_and_a_client_chain_are_read():
    assert [c.subject.rfc4514_string() for c in certificates(pem.ca().cert_pem)] == ["CN=test-ca"]
    chain = certificates("subject=CN=mirror\n" + pem.client().cert_pem + pem.ca().cert_pem)
    assert [c.subject.rfc4514_string() for c in chain] == ["CN=mirror", "CN=test-ca"]


@pytest.mark.parametrize(("text", "expected"), [
    ("hello", "not PEM"),
    ("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", "not PEM"),
    ("-----BEGIN CERTIFICATE-----\nMIIC\n", "not PEM: a -----BEGIN line without its -----END line"),
    ("-----BEGIN CERTIFICATE-----\nMIIC\n-----END PRIVATE KEY-----\n", "ends as PRIVATE KEY"),
    ("-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n", "not base64"),
    ("-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n", "is base64 but not an X.509 certificate"),
    ("-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n", "not an X.509 certificate"),
    ("-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n", "is empty"),
    ("-----BEGIN TRUSTED CERTIFICATE-----\naGVsbG8=\n-----END TRUSTED CERTIFICATE-----\n",
     "expected CERTIFICATE blocks, found TRUSTED CERTIFICATE"),
])
def test_broken_certificates_say_what_is_wrong(text, expected):
    assert expected in error_of(certificates, text)


def test_expired_and_not_yet_valid_certificates_are_refused():
    day = datetime.timedelta(days=1)
    expired = self_signed(NOW - 10 * day, NOW - day)
    assert error_of(certificates, pem.ca().cert_pem + expired).startswith("certificate 2 (CN=old) expired on ")
    assert "is not valid before" in error_of(certificates, self_signed(NOW + day, NOW + 10 * day, "future"))


def test_a_private_key_is_never_taken_for_a_certificate():
    message = error_of(certificates, pem.client().cert_pem + pem.client().key_pem)
    assert message.startswith("contains a private key: put it in key_pem")


def test_a_pkcs8_key_is_read_and_matched_to_its_certificate():
    issued = pem.client()
    key = private_key(issued.key_pem)
    cert = certificates(issued.cert_pem)[0]
    assert key_matches(cert, key)
    assert not key_matches(cert, private_key(pem.client("someone-else").key_pem))
    assert key_matches(certificates(_rsa_cert_and_key()[0])[0], private_key(_rsa_cert_and_key()[1]))


def _rsa_cert_and_key() -> tuple[str, str]:
    key = _RSA
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rsa")])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(7).not_valid_before(NOW - datetime.timedelta(days=1))
            .not_valid_after(NOW + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem(key)


_RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.mark.parametrize(("make", "expected"), [
    (lambda: key_pem(ec.generate_private_key(ec.SECP256R1()), password=b"pw"), "an encrypted key"),
    (lambda: key_pem(_RSA, serialization.PrivateFormat.TraditionalOpenSSL), "a RSA PRIVATE KEY (traditional format)"),
    (lambda: key_pem(ec.generate_private_key(ec.SECP256R1()), serialization.PrivateFormat.TraditionalOpenSSL),
     "a EC PRIVATE KEY (traditional format)"),
    (lambda: key_pem(ed25519.Ed25519PrivateKey.generate()), "an unsupported key type (Ed25519)"),
    (lambda: pem.client().key_pem + pem.client("other").key_pem, "expected one PRIVATE KEY block, found 2 blocks"),
    (lambda: pem.client().cert_pem, "expected a PRIVATE KEY block, found CERTIFICATE"),
    (lambda: "-----BEGIN PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END PRIVATE KEY-----\n", "not a PKCS#8 private key"),
    (lambda: "key: hunter2", "not PEM"),
])
def test_unusable_keys_say_why_without_quoting_them(make, expected):
    text = make()
    message = error_of(private_key, text)
    assert expected in message
    for line in text.splitlines():
        if line and not line.startswith("-----") and len(line) > 8:
            assert line not in message


def test_a_corrupted_key_is_not_base64_and_is_not_quoted():
    text = pem.client().key_pem
    broken = text.replace(text.splitlines()[1][:10], text.splitlines()[1][:9] + "*")
    message = error_of(private_key, broken)
    assert message.startswith("not base64") and text.splitlines()[1][10:30] not in message
