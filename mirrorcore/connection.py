"""How to reach one Kafka cluster, as client configuration for librdkafka and for Java clients."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_BOOTSTRAP_ADDRESS = re.compile(r"^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-_]*[A-Za-z0-9])?):(\d{1,5})$")


def parse_bootstrap_servers(value: str) -> list[str]:
    """`host:port[,host:port...]` as a list, or ValueError saying which address is wrong."""
    addresses = [address.strip() for address in value.split(",")]
    if not value.strip() or any(not address for address in addresses):
        raise ValueError("expected a comma-separated list of host:port addresses")
    for address in addresses:
        match = _BOOTSTRAP_ADDRESS.match(address)
        if not match:
            raise ValueError(f"{address!r} is not a host:port address")
        if not 0 < int(match.group(1)) < 65536:
            raise ValueError(f"{address!r} has a port outside 1-65535")
    return addresses


def _jaas_quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


@dataclass(frozen=True)
class ClusterConnection:
    alias: str
    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    ca_pem: str = ""
    cert_pem: str = ""
    key_pem: str = field(default="", repr=False)
    config: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClusterConnection:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["config"] = {str(k): str(v) for k, v in (data.get("config") or {}).items()}
        return cls(**known)

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL")

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol.endswith("SSL")

    def librdkafka_config(self) -> dict[str, str]:
        """Configuration for confluent-kafka clients (admin, heartbeat producer, checks)."""
        conf = {"bootstrap.servers": self.bootstrap_servers, "security.protocol": self.security_protocol}
        if self.uses_sasl:
            conf |= {"sasl.mechanism": self.sasl_mechanism, "sasl.username": self.username,
                     "sasl.password": self.password}
        if self.uses_tls:
            if self.ca_pem:
                conf["ssl.ca.pem"] = self.ca_pem
            if self.cert_pem and self.key_pem:
                conf |= {"ssl.certificate.pem": self.cert_pem, "ssl.key.pem": self.key_pem}
        return conf

    def java_properties(self) -> dict[str, str]:
        """Configuration for Java Kafka clients (Spark's consumer, our producer); PEM inline, no files."""
        props = dict(self.config) | {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        if self.uses_sasl:
            module = (
                "org.apache.kafka.common.security.plain.PlainLoginModule"
                if self.sasl_mechanism == "PLAIN"
                else "org.apache.kafka.common.security.scram.ScramLoginModule"
            )
            props["sasl.mechanism"] = self.sasl_mechanism
            props["sasl.jaas.config"] = (
                f'{module} required username="{_jaas_quote(self.username)}" '
                f'password="{_jaas_quote(self.password)}";'
            )
        if self.uses_tls:
            if self.ca_pem:
                props |= {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": self.ca_pem}
            if self.cert_pem and self.key_pem:
                props |= {"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": self.cert_pem,
                          "ssl.keystore.key": self.key_pem}
        return props
