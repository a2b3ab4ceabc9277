"""The overview with 50 mirrors and 30 days of metric history: under 1 s, on the server and in a browser.

The history is what the rollup keeps (minutes for the last 48 h, hours for 30 days), seeded
directly; the live state (status, heartbeats, lag) is in the devstack's real Redis.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from mirrorcore import channel, series
from mirrors.models import Cluster, Connector, Deployment, MetricHour, MetricMinute, Mirror
from mirrors.services.mirrors import create_mirror
from mirrors.services.redis_client import get_redis
from mirrors.services.rollup import minute_data
from tests.integration.browser import log_in, screenshot

pytestmark = pytest.mark.django_db(transaction=True)

MIRRORS, DAYS, LIMIT_SECONDS = 50, 30, 1.0
# Page loads timed in the browser; the median is judged. Beside the other test lane the median of 3 loads was
# 0.83 s in one run and 1.19 s and 1.63 s in two others: a load waiting for one of the two shared cores
# weighs less in the median of 5.
BROWSER_LOADS = 5
CLUSTERS = ("east", "west", "north", "south", "dr-east", "dr-west")


def a_minute(i: int) -> dict:
    """One minute of a busy mirror, as the rollup stores it (two topics, one group, four tasks)."""
    return minute_data({
        "heartbeat": [{"flow": "east->west", "latency_ms": 10 + (i + k) % 30} for k in range(60)],
        "lag": [{"records": (i * 7 + k) % 50, "seconds": 0.3, "idle": False, "source_ends": {"orders": i, "pay": i},
                 "partitions": [{"topic": "orders", "partition": k % 8, "remote_topic": "east.orders",
                                 "records": (i * 7 + k) % 50, "seconds": 0.3}]} for k in range(30)],
        "throughput": [{"records_per_s": 4000.0, "bytes_per_s": 2.0e6, "records": i * 240_000, "bytes": i * 10 ** 8,
                        "topics": {"orders": 2500.0, "pay": 1500.0}} for _ in range(30)],
        "checkpoint": [{"groups": [{"group": "billing", "partitions": 8, "checkpoints": 8, "reprocess": 12}]}],
        "tasks": [{"RUNNING": 4} for _ in range(30)],
    })


class Applications(threading.Thread):
    """Stands in for 50 running applications: each publishes its status and a heartbeat every second."""

    def __init__(self, redis, reports: dict[str, tuple[dict, str]]) -> None:
        super().__init__(daemon=True)
        self.redis, self.reports = redis, reports
        self.halt = threading.Event()

    def publish(self) -> None:
        now = time.time()
        for name, (status, flow) in self.reports.items():
            channel.publish_status(self.redis, name, status)
            series.append(self.redis, name, "heartbeat", {"flow": flow, "latency_ms": 15}, at=now)
            series.append(self.redis, name, "lag", {"records": 0, "seconds": 0.015, "idle": True, "partitions": [],
                                                    "source_ends": {"orders": 1}}, at=now)

    def run(self) -> None:
        while not self.halt.wait(1.0):
            self.publish()


def seed(redis) -> tuple[dict, Applications]:
    clusters = {alias: Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}.example:9092")
                for alias in CLUSTERS}
    now = time.time()
    names, reports = [], {}
    for i in range(MIRRORS):
        source, target = CLUSTERS[i % len(CLUSTERS)], CLUSTERS[(i + 1 + i // len(CLUSTERS)) % len(CLUSTERS)]
        if source == target:
            target = CLUSTERS[(i + 2) % len(CLUSTERS)]
        mirror = create_mirror(name=f"mirror-{i:02d}", source=clusters[source], target=clusters[target])
        names.append(mirror.name)
        Deployment.objects.create(mirror_name=mirror.name, state="running", pid=10_000 + i,
                                  submitted_at=timezone.now() - timedelta(days=DAYS), last_report_at=timezone.now())
        failed = i == 7
        reported = {kind: {"state": "FAILED" if failed and kind == "source" else "RUNNING",
                           "error": "topic 'orders' is not authorized" if failed and kind == "source" else None,
                           "tasks": [{"id": t, "state": "RUNNING"} for t in range(2)], "restart": 0}
                    for kind in ("source", "checkpoint", "heartbeat")}
        Connector.objects.filter(mirror=mirror).update(state="RUNNING")
        reports[mirror.name] = ({"generation": mirror.generation, "connectors": reported}, f"{source}->{target}")

    minute_rows, hour_rows = [], []
    this_minute = datetime.fromtimestamp(now // 60 * 60, tz=UTC)
    minutes_kept = 48 * 60
    minutes = [a_minute(i) for i in range(60)]  # an hour's variety, built once: rows share them
    for name in names:
        minute_rows += [MetricMinute(mirror_name=name, minute=this_minute - timedelta(minutes=m),
                                     data=minutes[m % len(minutes)]) for m in range(1, minutes_kept + 1)]
        first_hour = (this_minute - timedelta(minutes=minutes_kept)).replace(minute=0)
        hour_rows += [MetricHour(mirror_name=name, hour=first_hour - timedelta(hours=h), data=minutes[h % len(minutes)])
                      for h in range(1, (DAYS * 24) - 48 + 1)]
    started = time.monotonic()
    MetricMinute.objects.bulk_create(minute_rows, batch_size=5000)
    MetricHour.objects.bulk_create(hour_rows, batch_size=5000)
    applications = Applications(redis, reports)
    applications.publish()
    return ({"minutes": len(minute_rows), "hours": len(hour_rows), "seed_seconds": time.monotonic() - started},
            applications)


def timed(fetch, runs: int = 7) -> tuple[float, float]:
    fetch()  # warm-up: templates, connections
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fetch()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), max(samples)


def test_overview_loads_in_under_a_second_with_50_mirrors_and_30_days_of_history(
        devstack, control_plane, admin_user, browse, figures):
    settings.REDIS_URL = devstack.redis_url
    get_redis.cache_clear()
    with control_plane["stopped"]():  # the 50 mirrors point at clusters that do not exist: nothing may run them
        seeded, applications = seed(get_redis())
        applications.start()
        try:
            measure(seeded, admin_user, browse, figures)
        finally:
            applications.halt.set()
            applications.join(10)
            forget(list(applications.reports))


def forget(names: list[str]) -> None:
    """Before the supervisor comes back: no trace of the 50 mirrors in the database or in Redis."""
    Mirror.objects.filter(name__in=names).delete()
    Deployment.objects.filter(mirror_name__in=names).delete()
    MetricMinute.objects.filter(mirror_name__in=names).delete()
    MetricHour.objects.filter(mirror_name__in=names).delete()
    keys = [key for name in names for key in (channel.status_key(name), channel.desired_key(name),
                                              *(series.series_key(name, s) for s in series.SERIES))]
    get_redis().delete(*keys)


def measure(seeded: dict, admin_user, browse, figures) -> None:
    client = Client()
    client.force_login(admin_user)

    def page():
        response = client.get("/")
        assert response.status_code == 200 and b"mirror-49" in response.content

    def api():
        response = client.get("/api/v1/overview/")
        assert response.status_code == 200 and len(response.json()["mirrors"]) == MIRRORS

    page_median, page_max = timed(page)
    api_median, api_max = timed(api)
    # The median of 7: one request held up by the 2 shared cores (the stand-in applications' thread,
    # the brokers) is reported as the max, not taken for the page's cost.
    assert page_median < LIMIT_SECONDS and api_median < LIMIT_SECONDS, (page_median, api_median)

    browser = browse(1280, 800)
    log_in(browser, "admin", "admin-password-123")
    loads = []
    for _ in range(BROWSER_LOADS):
        browser.goto("/")
        browser.locator("#topology .cluster").first.wait_for()
        loads.append(browser.evaluate("""() => {
            const nav = performance.getEntriesByType('navigation')[0];
            return {response: nav.responseEnd - nav.startTime, drawn: performance.now()};
        }"""))
    drawn = statistics.median(load["drawn"] for load in loads) / 1000
    draws = ", ".join(f"{load['drawn']:.0f}" for load in loads)
    response = statistics.median(load["response"] for load in loads) / 1000
    screenshot(browser, "overview-50-mirrors")
    assert drawn < LIMIT_SECONDS, f"the topology was drawn {drawn:.2f} s after navigation started ({draws} ms)"
    body = json.loads(browser.locator("#overview-data").text_content())
    assert sum(body["counts"].values()) == MIRRORS and body["counts"]["failed"] == 1

    figures(f"overview, {MIRRORS} mirrors, {seeded['minutes']:,} minute rows (48 h) + {seeded['hours']:,} hour rows "
            f"(to {DAYS} days) seeded in {seeded['seed_seconds']:.1f} s: "
            f"server page median {page_median * 1000:.0f} ms "
            f"(max {page_max * 1000:.0f} ms), API median {api_median * 1000:.0f} ms (max {api_max * 1000:.0f} ms); "
            f"browser: response {response * 1000:.0f} ms, topology drawn {drawn * 1000:.0f} ms after navigation "
            f"(median of {BROWSER_LOADS}; each load {draws} ms)")
