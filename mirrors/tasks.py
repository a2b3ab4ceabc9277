"""Celery tasks: thin, named, safe to run twice. The supervision pass, `reconcile`, is defined with the
code that queues it (mirrors/services/supervision.py) and registered here under the same name."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from mirrors.services import failover, rollup
from mirrors.services.redis_client import get_redis
from mirrors.services.supervision import reconcile

__all__ = ["finish_failovers", "reconcile", "rollup_metrics"]


@shared_task(name="mirrors.tasks.rollup_metrics", ignore_result=True)
def rollup_metrics() -> dict:
    """Every mirror's complete minutes into MetricMinute, minutes past MIRRORPLANE_METRICS_MINUTE_RETENTION_HOURS
    into MetricHour, then the retention (MIRRORPLANE_METRICS_RETENTION_DAYS)."""
    return rollup.run(get_redis(), settings.METRICS_RETENTION_DAYS, settings.METRICS_MINUTE_RETENTION_HOURS)


@shared_task(name="mirrors.tasks.finish_failovers", ignore_result=True)
def finish_failovers() -> int:
    """Commit the offsets of failed-over (or failed-back) groups that waited for their members to leave."""
    return failover.finish_pending()
