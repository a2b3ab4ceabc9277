"""Checks of the PEM certificates and private key a cluster is stored with: a broken one is refused when
it is saved, naming what is wrong, instead of failing the mirror later.

What Kafka's Java clients read (`ssl.truststore.certificates`, `ssl.keystore.certificate.chain`,
`ssl.keystore.key` with type PEM) and librdkafka accepts alike: X.509 certificates, and one unencrypted
PKCS#8 RSA, DSA or EC key. Messages never quote the key.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa

_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----", re.S)
_CONVERT = "`openssl pkcs8 -topk8 -nocrypt -in key.pem` converts it"
_KEY_TYPES = (rsa.RSAPrivateKey, dsa.DSAPrivateKey, ec.EllipticCurvePrivateKey)


class PemError(ValueError):
    """What is wrong with a PEM value, in a sentence fit for the field's error."""


@dataclass(frozen=True)
class Block:
    label: str  # CERTIFICATE, PRIVATE KEY, ...
    der: bytes


def blocks(text: str) -> list[Block]:
    """The PEM blocks of `text` (text around them is ignored, as OpenSSL and Kafka do), decoded."""
    if "-----BEGIN " not in text:
        raise PemError("not PEM: expected text between -----BEGIN ...----- and -----END ...----- lines")
    found = []
    for number, match in enumerate(_BLOCK.finditer(text), start=1):
        label, body, end = match.group(1), match.group(2), match.group(3)
        if "-----" in body:
            raise PemError(f"not PEM: {label} block {number} has a -----BEGIN line without its -----END line")
        if end != label:
            raise PemError(f"not PEM: block {number} begins as {label} but ends as {end}")
        if ":" in body:
            raise PemError(f"{label} block {number} has PEM headers (an encrypted legacy key?): not supported")
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            raise PemError(f"not base64: the body of {label} block {number} has characters base64 does not use "
                           "(or is cut short)") from None
        if not der:
            raise PemError(f"{label} block {number} is empty")
        found.append(Block(label, der))
    if not found or text.count("-----BEGIN ") != len(found):
        raise PemError("not PEM: a -----BEGIN line without its -----END line")
    return found


def _describe(cert: x509.Certificate) -> str:
    return cert.subject.rfc4514_string() or "without a subject"


def certificates(text: str, now: datetime | None = None) -> list[x509.Certificate]:
    """The certificates of a CA bundle or a client certificate chain, each valid now; PemError otherwise."""
    now = now or datetime.now(UTC)
    found = blocks(text)
    if any("PRIVATE KEY" in block.label for block in found):
        raise PemError("contains a private key: put it in key_pem, which is stored encrypted and never shown")
    result = []
    for number, block in enumerate(found, start=1):
        if block.label != "CERTIFICATE":
            raise PemError(f"expected CERTIFICATE blocks, found {block.label} (block {number})")
        try:
            cert = x509.load_der_x509_certificate(block.der)
        except ValueError:
            raise PemError(f"certificate {number} is base64 but not an X.509 certificate") from None
        if cert.not_valid_after_utc < now:
            raise PemError(f"certificate {number} ({_describe(cert)}) expired on "
                           f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC")
        if cert.not_valid_before_utc > now:
            raise PemError(f"certificate {number} ({_describe(cert)}) is not valid before "
                           f"{cert.not_valid_before_utc:%Y-%m-%d %H:%M} UTC")
        result.append(cert)
    return result


def private_key(text: str) -> rsa.RSAPrivateKey | dsa.DSAPrivateKey | ec.EllipticCurvePrivateKey:
    """The one unencrypted PKCS#8 key of `text`; PemError (never quoting the key) otherwise."""
    found = blocks(text)
    if len(found) != 1:
        raise PemError(f"expected one PRIVATE KEY block, found {len(found)} blocks "
                       f"({', '.join(block.label for block in found)})")
    label = found[0].label
    if label == "ENCRYPTED PRIVATE KEY":
        raise PemError(f"an encrypted key: give it unencrypted (Mirrorplane stores it encrypted); {_CONVERT}")
    if label in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY"):
        raise PemError(f"a {label} (traditional format): Kafka's Java clients read PKCS#8 (BEGIN PRIVATE KEY); "
                       f"{_CONVERT}")
    if label != "PRIVATE KEY":
        raise PemError(f"expected a PRIVATE KEY block, found {label}")
    try:
        key = serialization.load_der_private_key(found[0].der, password=None)
    except (ValueError, TypeError):
        raise PemError("the PRIVATE KEY block is base64 but not a PKCS#8 private key") from None
    except Exception:  # noqa: BLE001 - an unsupported algorithm; the library's text may quote the key
        raise PemError("the PRIVATE KEY block holds a key of an unsupported algorithm") from None
    if not isinstance(key, _KEY_TYPES):
        kind = type(key).__name__.replace("PrivateKey", "")
        raise PemError(f"an unsupported key type ({kind}): Kafka's Java clients read RSA, DSA and EC keys")
    return key


def key_matches(cert: x509.Certificate, key: rsa.RSAPrivateKey | dsa.DSAPrivateKey | ec.EllipticCurvePrivateKey
                ) -> bool:
    """Whether `key` is the private half of the certificate's public key."""
    spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return cert.public_key().public_bytes(*spki) == key.public_key().public_bytes(*spki)
