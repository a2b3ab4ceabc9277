import re

import pytest

from bench.demo_heartbeat import _DASHBOARD, _source_connector, markdown, summarize


def _point(at: float, latency_ms: int | None) -> dict:
    return {"at": at, "flow": "east->west", "latency_ms": latency_ms, "emitted_at": int(at * 1000) - (latency_ms or 0)}


def test_only_heartbeats_that_arrived_in_the_window_count():
    points = [_point(99.0, 900), *(_point(100.0 + i, 10 + i) for i in range(11)), _point(200.0, 5000)]
    figures = summarize(points, since=100.0, until=110.0)
    assert figures["heartbeats"] == 11
    assert figures["p50_ms"] == pytest.approx(15)
    assert figures["p90_ms"] == pytest.approx(19)
    assert figures["max_ms"] == 20


def test_points_without_a_latency_are_left_out_and_none_at_all_is_reported_as_none():
    assert summarize([_point(100.0, None)], since=0, until=1e10) == {"heartbeats": 0}


def test_the_report_states_the_goal_and_the_connector():
    result = {"rate": 200, "minutes": 5.0, "replicating_after_s": 31.4,
              "heartbeats": summarize([_point(100.0 + i, 11) for i in range(300)], 0, 1e10),
              "source_connector": {"state": "RUNNING", "mode": "real-time", "tasks": 2},
              "machine": {"cores": 2, "memory_gb": 23.4, "cpu_model": "a CPU",
                          "load_average_at_start": [0.5, 0.4, 0.3]}}
    report = markdown(result)
    assert "| 300 | 11 | 11 | 11 | 11 |" in report
    assert "p50 at most 100 ms: **met**" in report
    assert "replication mode real-time, tasks 2" in report

    result["heartbeats"] = {"heartbeats": 0}
    assert "**not met**" in markdown(result)


def test_the_dashboard_address_is_read_from_the_demos_banner():
    line = "  dashboard:  http://127.0.0.1:41234/\n"
    assert re.search(_DASHBOARD, line).group(1) == "http://127.0.0.1:41234"


def test_the_source_connector_is_read_from_the_status():
    status = {"connectors": {"source": {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"},
                                                                        {"id": 1, "state": "FAILED"}]}},
              "progress": {"replication_mode": {"setting": "auto", "mode": "real-time", "reason": "steady"}}}
    assert _source_connector(status) == {"state": "RUNNING", "mode": "real-time", "tasks": 1}
    assert _source_connector({"connectors": {}, "progress": None}) == {"state": None, "mode": None, "tasks": 0}
