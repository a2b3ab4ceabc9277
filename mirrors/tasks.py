"""Celery tasks: thin, named, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from mirrors.services import failover, rollup
from mirrors.services.reconcile import Reconciler
from mirrors.services.redis_client import get_redis

log = logging.getLogger(__name__)
RECONCILE_LOCK = "mirrorplane:reconcile-lock"


@shared_task(name="mirrors.tasks.reconcile", ignore_result=True)
def reconcile() -> bool:
    """One supervision pass; skipped (False) when another pass holds the lock."""
    client = get_redis()
    lock = client.lock(RECONCILE_LOCK, timeout=max(120, settings.RECONCILE_SECONDS * 10), blocking=False)
    if not lock.acquire(blocking=False):
        return False
    try:
        Reconciler(client).run()
    finally:
        try:
            lock.release()
        except Exception:  # noqa: BLE001 - an expired lock is released already
            log.warning("reconcile lock expired before release")
    return True


@shared_task(name="mirrors.tasks.rollup_metrics", ignore_result=True)
def rollup_metrics() -> dict:
    """Every mirror's complete minutes into MetricMinute, minutes past MIRRORPLANE_METRICS_MINUTE_RETENTION_HOURS
    into MetricHour, then the retention (MIRRORPLANE_METRICS_RETENTION_DAYS)."""
    return rollup.run(get_redis(), settings.METRICS_RETENTION_DAYS, settings.METRICS_MINUTE_RETENTION_HOURS)


@shared_task(name="mirrors.tasks.finish_failovers", ignore_result=True)
def finish_failovers() -> int:
    """Commit the offsets of failed-over (or failed-back) groups that waited for their members to leave."""
    return failover.finish_pending()
