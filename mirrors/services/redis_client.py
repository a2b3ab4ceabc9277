"""The control plane's Redis: live statuses and series, and the Celery broker (one URL for both)."""

from functools import cache

import redis
from django.conf import settings


@cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)


def use_redis(url: str) -> None:
    """Point this process at another Redis after start-up (the demo's and the tests' own server):
    its reads and writes and the supervision passes it queues."""
    from controlplane.celery import app as celery_app

    settings.REDIS_URL = url
    get_redis.cache_clear()
    celery_app.conf.broker_url = url
