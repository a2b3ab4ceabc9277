from django.db import models


class MetricMinute(models.Model):
    """One minute of a mirror's time series, rolled up from Redis (mirrors/services/rollup.py).

    `data` holds that minute's aggregates per series (see rollup.minute_data). Keyed by mirror
    name like Deployment; the rows go with the mirror (delete_mirror) or, once older than
    METRICS_MINUTE_RETENTION_HOURS, into their hour's MetricHour row (rollup.compact).
    The unique (mirror_name, minute) index serves the graphs' range scans.
    """

    mirror_name = models.CharField(max_length=63)
    minute = models.DateTimeField(help_text="start of the minute (UTC)")
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["mirror_name", "minute"]
        constraints = [models.UniqueConstraint(fields=["mirror_name", "minute"], name="metricminute_mirror_minute")]
        indexes = [models.Index(fields=["minute"], name="metricminute_minute")]  # compaction scans

    def __str__(self) -> str:
        return f"{self.mirror_name} {self.minute:%Y-%m-%d %H:%M}"


class MetricHour(models.Model):
    """One hour of a mirror's time series: its minutes merged (rollup.merge), same `data` shape.

    Written by the compaction of minutes past METRICS_MINUTE_RETENTION_HOURS; kept
    METRICS_RETENTION_DAYS, and deleted with the mirror.
    """

    mirror_name = models.CharField(max_length=63)
    hour = models.DateTimeField(help_text="start of the hour (UTC)")
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["mirror_name", "hour"]
        constraints = [models.UniqueConstraint(fields=["mirror_name", "hour"], name="metrichour_mirror_hour")]
        indexes = [models.Index(fields=["hour"], name="metrichour_hour")]  # retention deletes

    def __str__(self) -> str:
        return f"{self.mirror_name} {self.hour:%Y-%m-%d %H:00}"
