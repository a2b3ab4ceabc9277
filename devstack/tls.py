"""Throwaway certificate authorities and certificates for local secured brokers (tests, devstack).

Everything is PEM text: certificates as X.509 PEM, private keys as unencrypted PKCS#8 PEM, which
both Kafka's PEM key store (`ssl.keystore.type=PEM`) and librdkafka accept. Keys are EC P-256:
quick to generate and supported by the JDK and OpenSSL alike. Not for production use.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass, field
from typing import cast

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
    CertificateIssuerPublicKeyTypes,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_SANS = ("localhost", "127.0.0.1")
_VALIDITY = datetime.timedelta(days=365)
_CLOCK_SKEW = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class CertificateAuthority:
    common_name: str
    cert_pem: str
    key_pem: str = field(repr=False)

    @classmethod
    def from_pem(cls, cert_pem: str, key_pem: str) -> CertificateAuthority:
        """A CA kept as PEM files (its common name read from the certificate)."""
        cert = x509.load_pem_x509_certificate(cert_pem.encode())
        names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return cls(str(names[0].value) if names else "", cert_pem, key_pem)


@dataclass(frozen=True)
class IssuedCertificate:
    common_name: str
    cert_pem: str
    key_pem: str = field(repr=False)

    @property
    def keystore_pem(self) -> str:
        """Key and certificate in one file: what `ssl.keystore.location` with `ssl.keystore.type=PEM` reads."""
        return self.key_pem + self.cert_pem


def make_ca(common_name: str) -> CertificateAuthority:
    """A self-signed CA that may sign end-entity certificates (not intermediates)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SKEW)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                          key_encipherment=False, data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(common_name, _cert_pem(cert), _key_pem(key))


def issue(
    ca: CertificateAuthority,
    common_name: str,
    server: bool = True,
    sans: list[str] | tuple[str, ...] | None = None,
) -> IssuedCertificate:
    """A certificate signed by `ca`: for a server (serverAuth and clientAuth, `sans` default to
    localhost and 127.0.0.1) or for a client (clientAuth only, no SANs unless given). The subject is
    `CN=<common_name>`, so a broker's principal for it is `User:CN=<common_name>` by default."""
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem.encode())
    # A CA's keys are of the kinds that sign certificates (sign() refuses any other)
    ca_key = cast(CertificateIssuerPrivateKeyTypes,
                  serialization.load_pem_private_key(ca.key_pem.encode(), password=None))
    ca_public_key = cast(CertificateIssuerPublicKeyTypes, ca_cert.public_key())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH] if server else [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SKEW)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False, content_commitment=False,
                          key_encipherment=False, data_encipherment=False, key_agreement=True,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_public_key), critical=False)
    )
    names = list(DEFAULT_SANS if sans is None and server else sans or ())
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName([_general_name(n) for n in names]),
                                        critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return IssuedCertificate(common_name, _cert_pem(cert), _key_pem(key))


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _key_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
