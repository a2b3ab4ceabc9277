from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from mirrorcore.filters import DEFAULT_GROUPS, DEFAULT_GROUPS_EXCLUDE, DEFAULT_TOPICS, DEFAULT_TOPICS_EXCLUDE
from mirrors.choices import ConnectorKind, ConnectorState, DesiredState, ReplicationPolicy
from mirrors.models.cluster import Cluster

name_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9\-]{0,62}$", "use lower-case letters, digits and '-', at most 63 characters"
)


class Mirror(models.Model):
    """A replication flow source -> target: desired configuration of its three connectors.

    `generation` grows with every change that needs the application restarted with a new
    configuration; desired connector states alone do not change it.
    """

    name = models.CharField(max_length=63, unique=True, validators=[name_validator])
    source = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="outgoing_mirrors")
    target = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="incoming_mirrors")
    topics = models.TextField(default=DEFAULT_TOPICS)
    topics_exclude = models.TextField(default=DEFAULT_TOPICS_EXCLUDE, blank=True)
    groups = models.TextField(default=DEFAULT_GROUPS)
    groups_exclude = models.TextField(default=DEFAULT_GROUPS_EXCLUDE, blank=True)
    replication_policy = models.CharField(
        max_length=16, choices=ReplicationPolicy.choices, default=ReplicationPolicy.DEFAULT
    )
    separator = models.CharField(max_length=8, default=".")
    generation = models.PositiveIntegerField(default=1)
    spark = models.JSONField(default=dict, blank=True,
                             help_text="spark-submit resources: driver_memory, executor_memory, executor_cores, ...")
    adopted = models.JSONField(null=True, blank=True, default=None, help_text=(
        "taken over from a running MM2: where each partition starts without a checkpoint "
        "(mirrorcore/adoption.py)"))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="mirror_source_not_target")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.source_id}->{self.target_id})"


class Connector(models.Model):
    """One of a mirror's connectors: the operator's wishes and what was last observed."""

    mirror = models.ForeignKey(Mirror, on_delete=models.CASCADE, related_name="connectors")
    kind = models.CharField(max_length=16, choices=ConnectorKind.choices)
    # desired
    tasks_max = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(1000)])
    desired_state = models.CharField(max_length=8, choices=DesiredState.choices, default=DesiredState.RUNNING)
    auto_restart_enabled = models.BooleanField(default=True)
    max_restarts = models.PositiveIntegerField(null=True, blank=True, help_text="empty: no limit")
    config = models.JSONField(default=dict, blank=True)
    restart_token = models.PositiveIntegerField(default=0, help_text="bumped to ask the application to restart it")
    # observed
    state = models.CharField(max_length=16, choices=ConnectorState.choices, default=ConnectorState.UNASSIGNED)
    error = models.TextField(blank=True, default="")
    tasks = models.JSONField(default=list, blank=True)
    restarts = models.PositiveIntegerField(default=0)
    next_restart_at = models.DateTimeField(null=True, blank=True)
    state_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["mirror", "kind"]
        constraints = [models.UniqueConstraint(fields=["mirror", "kind"], name="one_connector_per_kind")]

    def __str__(self) -> str:
        return f"{self.mirror.name}/{self.kind}"
