"""Real PEM certificates and keys for tests that store clusters (the API parses them), generated once."""

from __future__ import annotations

from functools import cache

from devstack import tls


@cache
def ca() -> tls.CertificateAuthority:
    return tls.make_ca("test-ca")


@cache
def client(name: str = "mirror") -> tls.IssuedCertificate:
    """A client certificate and its key, issued by `ca()`."""
    return tls.issue(ca(), name, server=False)


def key_body(pem: str) -> str:
    """The first base64 line of a key: what must never show anywhere."""
    return pem.splitlines()[1]
