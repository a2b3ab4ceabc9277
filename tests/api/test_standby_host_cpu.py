"""How the standby pool reads the host's CPU before a refill: readings over a window, a sample when it has
none old enough, the busy limit."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from mirrors.services import standby


@pytest.mark.parametrize(("limit", "busy", "waits"), [(50, 49.9, False), (50, 50.0, True), (50, 97.0, True),
                                                       (100, 100.0, False)])
def test_a_refill_waits_at_or_above_the_limit_and_never_at_100(settings, limit, busy, waits):
    settings.STANDBY_REFILL_BELOW_BUSY_PCT = limit
    assert standby.refill_waits(busy) is waits


class _CpuTimes:
    """psutil.cpu_times' shape: the fields the reading sums, in seconds."""

    def __init__(self, busy: float, idle: float) -> None:
        self.user, self.idle = busy, idle

    def __iter__(self):
        return iter((self.user, self.idle))


def _host_cpu(*readings: tuple[float, float, float]) -> standby.HostCpu:
    """A HostCpu holding readings (seconds ago, total, idle)."""
    host = standby.HostCpu()
    now = time.monotonic()
    host.readings.extend(standby.CpuReading(now - ago, total=total, idle=idle) for ago, total, idle in readings)
    return host


def test_a_recent_reading_is_the_baseline_and_the_pass_does_not_wait(monkeypatch):
    host = _host_cpu((2, 100.0, 60.0))
    monkeypatch.setattr(standby.psutil, "cpu_times", lambda: _CpuTimes(busy=50.0, idle=70.0))
    monkeypatch.setattr(standby.time, "sleep", lambda seconds: pytest.fail("the pass waited for a sample"))
    assert host.busy_pct() == 50.0  # 20 s of CPU time since the baseline, 10 of them idle
    assert host.readings[-1].total == 120.0  # kept for the next passes


def test_one_quiet_pass_among_busy_ones_does_not_read_as_an_idle_host(monkeypatch):
    # 29 s ago the counters were at 0; 2 s ago 40 of 56 s were busy; in the last 2 s 1 of 4
    host = _host_cpu((45, 0.0, 0.0), (29, 0.0, 0.0), (2, 56.0, 16.0))
    monkeypatch.setattr(standby.psutil, "cpu_times", lambda: _CpuTimes(busy=41.0, idle=19.0))
    assert len(host.readings) == 3
    assert round(host.busy_pct(), 1) == 68.3, "41 of 60 s over the window, not the last pass's 25%"
    assert [round(time.monotonic() - r.at) for r in host.readings] == [29, 2, 0], "older than the window: gone"
    assert standby.refill_waits(68.3)


@pytest.mark.parametrize("age", [0.1, 120.0])
def test_without_a_reading_old_enough_the_pass_samples(monkeypatch, age):
    host = _host_cpu((age, 0.0, 0.0))
    counters = iter([_CpuTimes(busy=10.0, idle=10.0), _CpuTimes(busy=10.5, idle=10.0)])
    monkeypatch.setattr(standby.psutil, "cpu_times", lambda: next(counters))
    waited = []
    monkeypatch.setattr(standby.time, "sleep", waited.append)
    assert host.busy_pct() == 100.0
    assert waited == [standby.BUSY_SAMPLE_SECONDS]


def test_a_reading_without_elapsed_time_is_idle_and_busy_is_bounded():
    reading = standby.CpuReading(0.0, total=10.0, idle=5.0)
    assert reading.busy_pct_until(standby.CpuReading(1.0, total=10.0, idle=5.0)) == 0.0
    assert reading.busy_pct_until(standby.CpuReading(1.0, total=12.0, idle=4.0)) == 100.0


def test_the_hosts_cores_read_busy_when_every_core_spins():
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.5)
        assert standby.HostCpu().busy_pct() >= 80.0
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
