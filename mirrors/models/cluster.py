from django.core.validators import RegexValidator
from django.db import models

from mirrorcore.connection import ClusterConnection
from mirrors.choices import SaslMechanism, SecurityProtocol
from mirrors.crypto import EncryptedTextField

alias_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,62}$",
    "use letters, digits, '-' and '_' (no '.', which separates remote topic names), at most 63",
)


class Cluster(models.Model):
    """A Kafka cluster and how to reach it; secrets are encrypted at rest."""

    alias = models.CharField(max_length=63, unique=True, validators=[alias_validator])
    bootstrap_servers = models.CharField(max_length=2048)
    security_protocol = models.CharField(
        max_length=16, choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = models.CharField(max_length=16, choices=SaslMechanism.choices, blank=True, default="")
    username = models.CharField(max_length=255, blank=True, default="")
    password = EncryptedTextField(blank=True, default="")
    ca_pem = models.TextField(blank=True, default="")
    cert_pem = models.TextField(blank=True, default="")
    key_pem = EncryptedTextField(blank=True, default="")
    config = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["alias"]

    def __str__(self) -> str:
        return self.alias

    def connection(self) -> ClusterConnection:
        return ClusterConnection(
            alias=self.alias,
            bootstrap_servers=self.bootstrap_servers,
            security_protocol=self.security_protocol,
            sasl_mechanism=self.sasl_mechanism,
            username=self.username,
            password=self.password,
            ca_pem=self.ca_pem,
            cert_pem=self.cert_pem,
            key_pem=self.key_pem,
            config={str(k): str(v) for k, v in self.config.items()},
        )
