from django.db import models

from mirrors.choices import ApplicationState


class Deployment(models.Model):
    """The Spark application that runs a mirror, as its supervisor knows it.

    Keyed by mirror name, not a foreign key: it must outlive a deleted mirror until the
    supervisor has stopped its application.
    """

    mirror_name = models.CharField(max_length=63, unique=True)
    state = models.CharField(max_length=16, choices=ApplicationState.choices, default=ApplicationState.NOT_RUNNING)
    engine = models.CharField(max_length=16, default="local", help_text="where the application runs: local | yarn")
    application_id = models.CharField(max_length=64, blank=True, default="",
                                      help_text="the engine's id: a process group (local) or a YARN application id")
    tracking_url = models.CharField(max_length=500, blank=True, default="")
    pid = models.PositiveIntegerField(null=True, blank=True, help_text="the driver's process, when it runs here")
    generation = models.PositiveIntegerField(default=0)
    submissions = models.PositiveIntegerField(default=0)
    restarts = models.PositiveIntegerField(default=0, help_text="resubmissions after a failure")
    submitted_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    last_report_at = models.DateTimeField(null=True, blank=True, help_text="the application's last status report")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["mirror_name"]

    def __str__(self) -> str:
        return f"{self.mirror_name} ({self.state}, {self.engine} {self.application_id or '-'})"

    def snapshot(self) -> tuple:
        """Every recorded field but `updated_at`: equal snapshots are the same record."""
        return tuple(getattr(self, f.attname) for f in Deployment._meta.concrete_fields if f.name != "updated_at")
