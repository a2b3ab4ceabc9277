"""Fixed vocabularies: security settings, connector kinds, desired and observed states."""

from django.db import models

from mirrorcore import channel


class SecurityProtocol(models.TextChoices):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"


class SaslMechanism(models.TextChoices):
    NONE = "", "none"
    PLAIN = "PLAIN"
    SCRAM_SHA_256 = "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512"


class ReplicationPolicy(models.TextChoices):
    DEFAULT = "default"
    IDENTITY = "identity"
    LEGACY = "legacy", "legacy (MM1 emulation)"


class ConnectorKind(models.TextChoices):
    SOURCE = "source"
    CHECKPOINT = "checkpoint"
    HEARTBEAT = "heartbeat"


class DesiredState(models.TextChoices):
    """What the operator asked for (Strimzi's `state` of a connector)."""

    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"


class ConnectorState(models.TextChoices):
    """What the connector is doing (Kafka Connect's connector and task states)."""

    UNASSIGNED = channel.UNASSIGNED
    RUNNING = channel.RUNNING
    PAUSED = channel.PAUSED
    STOPPED = channel.STOPPED
    FAILED = channel.FAILED
    RESTARTING = channel.RESTARTING


class ApplicationState(models.TextChoices):
    """The mirror's Spark application as the supervisor sees it."""

    NOT_RUNNING = "not_running"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    FAILED = "failed"  # gave up after max_restarts; an operator's restart submits it again
