"""Heartbeat latency, link health and replication lag as time series, on real clusters and real Spark."""

from __future__ import annotations

import itertools
import statistics
import threading
import time

import pytest

from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

UNHEALTHY_AFTER = 5
BACKFILL = 300_000


def series(api, name: str, kind: str, since: float) -> list[dict]:
    response = api.get(f"/api/v1/mirrors/{name}/metrics/", {"series": kind, "since": since})
    assert response.status_code == 200, response.content
    return response.json()["points"]


def link_state(api, name: str) -> dict:
    return api.get(f"/api/v1/mirrors/{name}/status/").json()["link"]


def wait_for_link(api, name: str, state: str, timeout: float) -> float:
    started = time.monotonic()
    wait_for_status(api, name, lambda s: s["link"]["state"] == state, timeout)
    return time.monotonic() - started


def test_heartbeat_latency_series_and_link_health(api, devstack, control_plane, unique, figures):
    east = devstack.clusters["east"].bootstrap_servers
    topic, name = f"idle-{unique}", f"link-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        "connectors": {"heartbeat": {"config": {"link.unhealthy.after.seconds": str(UNHEALTHY_AFTER)}}},
    }, format="json").status_code == 201
    wait_for_link(api, name, "healthy", 120)

    since = time.time()
    time.sleep(20)
    points = [p for p in series(api, name, "heartbeat", since) if p["at"] >= since]
    gaps = [b["at"] - a["at"] for a, b in itertools.pairwise(points)]
    latencies = sorted(p["latency_ms"] for p in points)
    p50 = statistics.median(latencies)
    assert len(points) >= 12, f"only {len(points)} heartbeat points in 20 s"
    assert max(gaps) <= 2.5, f"a gap of {max(gaps):.1f} s between heartbeat points"
    assert p50 < 2000, f"heartbeat latency p50 {p50} ms"
    assert all(p["flow"] == "east->west" for p in points)

    source_state(api, name, "paused")
    paused_at = time.monotonic()
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED", 30)
    pause_seen = time.monotonic() - paused_at
    wait_for_link(api, name, "unhealthy", UNHEALTHY_AFTER + 15)
    unhealthy_after = time.monotonic() - paused_at
    reason = link_state(api, name)["reason"]
    assert "PAUSED" in reason, reason
    assert unhealthy_after <= UNHEALTHY_AFTER + 4, f"unhealthy only {unhealthy_after:.1f} s after the pause"

    source_state(api, name, "running")
    healthy_after = wait_for_link(api, name, "healthy", 60)
    figures(f"heartbeat (idle): {len(points)} points in 20 s, gaps {min(gaps):.2f}-{max(gaps):.2f} s, latency "
            f"p50 {p50:.0f} ms, p90 {latencies[int(len(latencies) * 0.9)]} ms, max {latencies[-1]} ms")
    figures(f"link: unhealthy {unhealthy_after:.1f} s after the PATCH pausing the source (PAUSED seen after "
            f"{pause_seen:.1f} s; limit {UNHEALTHY_AFTER} s, "
            f"reason {reason!r}); healthy again {healthy_after:.1f} s after resume")


def test_lag_series_rises_then_drains_during_a_backfill(api, devstack, control_plane, unique, figures):
    east = devstack.clusters["east"].bootstrap_servers
    topic, name = f"backfill-{unique}", f"lag-{unique}"
    kafka_tools.create_topic(east, topic, 3)
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic},
                    format="json").status_code == 201
    wait_for_status(api, name, lambda s: topic in ((s["progress"] or {}).get("topics") or []), 120)
    # The baseline: a lag point of 0 before the backfill.
    idle = wait_for_status(api, name, lambda s: (s.get("lag") or {}).get("records") == 0, 60)
    idle_since = idle["lag"]["at"] - 0.5

    # The backfill is written while the source connector is paused, so it waits in full whatever
    # the sampling period and however fast the mirror copies (it keeps pace with a producer).
    paused_at = time.time()
    source_state(api, name, "paused")
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED", 60)
    since = time.time()
    stamp = int(since * 1000)

    def backfill() -> None:
        for chunk in range(6):
            base = chunk * BACKFILL // 6
            kafka_tools.produce(east, topic, {p: [Record(None, str(i).encode(), (), stamp)
                                                  for i in range(base + p, base + BACKFILL // 6, 3)]
                                              for p in range(3)})

    producer = threading.Thread(target=backfill)
    producer.start()
    producer.join(300)
    wait_for_status(api, name, lambda s: ((s.get("lag") or {}).get("records") or 0) >= BACKFILL, 60)
    source_state(api, name, "running")
    resumed_at = time.time()
    wait_for_status(api, name, lambda s: (s.get("lag") or {}).get("records") == 0
                    and (s.get("lag") or {}).get("at", 0) > resumed_at + 2, 300)
    drained_at = time.time()
    baseline = [p["records"] for p in series(api, name, "lag", idle_since) if "records" in p and p["at"] < paused_at]
    points = [p for p in series(api, name, "lag", since) if "records" in p]
    records = [p["records"] for p in points]
    peak = max(records)
    peak_at = points[records.index(peak)]["at"]
    assert baseline and baseline[-1] == 0, f"no idle point before the backfill: {baseline}"
    assert peak >= BACKFILL, records
    assert records[-1] == 0
    assert any(p["records"] == 0 and p["at"] > peak_at for p in points), "the lag never fell back to 0"
    waiting = [part for p in points for part in p["partitions"] if part["topic"] == topic]
    assert {part["remote_topic"] for part in waiting} == {f"east.{topic}"}
    timed = [part["seconds"] for part in waiting if part["seconds"] is not None]
    assert len(timed) >= len(waiting) / 2, f"the oldest waiting record was timed for {len(timed)} of {len(waiting)}"
    figures(f"lag during a {BACKFILL:,}-record backfill written while the source was paused: {len(points)} "
            f"points, peak {peak:,} records ({peak_at - since:.1f} s in, oldest waiting record up to "
            f"{max(timed):.1f} s old); lag 0 {drained_at - resumed_at:.1f} s after the resume")


def source_state(api, name: str, state: str) -> None:
    response = api.patch(f"/api/v1/mirrors/{name}/", {"connectors": {"source": {"state": state}}}, format="json")
    assert response.status_code == 200, response.content
