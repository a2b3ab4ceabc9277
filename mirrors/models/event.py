from django.db import models


class Event(models.Model):
    """One line of a mirror's history: an operator's action or a state transition the supervisor saw.

    Keyed by names, not foreign keys, so the history outlives deleted mirrors and clusters.
    """

    class Kind(models.TextChoices):
        ACTION = "action"  # someone asked for something (API, dashboard, import)
        TRANSITION = "transition"  # the supervisor saw a state change

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    actor = models.CharField(max_length=150, help_text="user name, or 'supervisor'")
    mirror = models.CharField(max_length=63, blank=True, default="", db_index=True)
    cluster = models.CharField(max_length=63, blank=True, default="")
    connector = models.CharField(max_length=16, blank=True, default="")
    action = models.CharField(max_length=32, help_text="create, update, pause, restart, state ...")
    from_state = models.CharField(max_length=32, blank=True, default="")
    to_state = models.CharField(max_length=32, blank=True, default="")
    detail = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        subject = "/".join(filter(None, [self.mirror or self.cluster, self.connector]))
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {subject}"
