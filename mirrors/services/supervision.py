"""The supervision pass (the Celery task `mirrors.tasks.reconcile`), and asking for one now rather than
at its next beat.

Celery beat runs a reconcile pass every MIRRORPLANE_RECONCILE_SECONDS; a mirror created, changed
or deleted through the API queues one more as soon as its transaction commits, so its application
is submitted (or stopped) at once. Best effort: if the broker cannot take the task, beat's next
pass does the same work. The request that queued it waits at most BROKER_CONNECT_SECONDS for the
broker (one connection attempt, no retries), not the several seconds of kombu's retry policy.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction

from mirrors.services.reconcile import Reconciler
from mirrors.services.redis_client import get_redis

log = logging.getLogger(__name__)

BROKER_CONNECT_SECONDS = 1.0
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


def reconcile_soon() -> None:
    """Queue a supervision pass once the current transaction (if any) commits."""
    transaction.on_commit(_queue_pass)


def _queue_pass() -> None:
    try:
        with reconcile.app.connection_for_write(connect_timeout=BROKER_CONNECT_SECONDS,
                                                transport_options={"max_retries": 0}) as connection:
            reconcile.apply_async(connection=connection, retry=False,
                                  expires=max(settings.RECONCILE_SECONDS * 2, 5))
    except Exception as error:  # noqa: BLE001 - any broker failure only delays the pass until beat's next one
        log.warning("supervision pass not queued (beat runs one within %.0f s): %s", settings.RECONCILE_SECONDS, error)
