from django.db import models

from mirrors.models.mirror import Mirror


class Failover(models.Model):
    """A mirror A -> B failed over to B and, later, failed back through its reverse mirror B -> A.

    `groups` holds each consumer group's latest offsets result per direction; `pending` the groups whose
    offsets still wait for the group to have no member on the cluster they are written to (or, failing
    back, for the reverse mirror to copy far enough); a Celery beat task finishes them.
    """

    class Phase(models.TextChoices):
        FAILED_OVER = "failed_over"
        FAILED_BACK = "failed_back"

    mirror = models.OneToOneField(Mirror, on_delete=models.CASCADE, related_name="failover")
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.FAILED_OVER)
    actor = models.CharField(max_length=150)
    forced = models.BooleanField(default=False)
    drained = models.BooleanField(default=False)
    summary = models.TextField(blank=True, default="", help_text="migration readiness when it failed over")
    groups = models.JSONField(default=list, blank=True)
    pending = models.JSONField(default=list, blank=True, help_text='[{"group", "direction": forward|back}]')
    reverse_mirror = models.CharField(max_length=63, blank=True, default="")
    failed_over_at = models.DateTimeField(auto_now_add=True)
    failed_back_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.mirror.name} {self.phase}"
