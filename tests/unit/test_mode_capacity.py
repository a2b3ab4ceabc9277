"""Auto mode remembers the rate real-time mode fell behind at, and keeps micro-batches while records
arrive faster than it copied then: the source connector's side of `replication_mode.decide`."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_runtime import replication_mode as rm
from spark_runtime.connectors import source_modes
from spark_runtime.connectors.source_modes import ReplicationModes


class Modes(ReplicationModes):
    """The mixin over a source of `ends` records and a query that copied `copied`, in auto mode."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        self.mode_setting, self.mode, self.mode_switches = rm.AUTO, rm.ModeDecision(rm.REAL_TIME, "start"), 0
        self.query, self.topics, self.fresh, self.slots = object(), {"t": 2}, False, 2
        self.consumer_per_task_slot = True
        self.settings = SimpleNamespace(get_int=lambda key: 50_000)
        self.progress = SimpleNamespace(metrics={"records": 0})
        self.spark = SimpleNamespace(sparkContext=SimpleNamespace(master="local[2]"))
        self.ends, self.started = 0, []
        self.source_admin = SimpleNamespace(
            end_offsets=lambda partitions: {("t", 0): self.ends // 2, ("t", 1): self.ends - self.ends // 2})

    def task_slots(self) -> int:
        return 2

    def _partitions(self):
        return [("t", 0), ("t", 1)]

    def _stop_query(self) -> None:
        self.query = None

    def _start_query(self, mode=None) -> None:
        self._take_mode(mode)
        self.query = object()
        self.started.append(mode.mode)

    def _count_slots(self) -> None:
        """Two task slots throughout."""

    def _grow_remote_partitions(self) -> None:
        """No partition is added."""

    def positions(self):
        copied = self.progress.metrics["records"]
        return SimpleNamespace(next_offsets={("t", 0): copied // 2, ("t", 1): copied - copied // 2})

    def check(self, ends: int, copied: int) -> None:
        """One mode check, `MODE_CHECK_SECONDS` after the previous one."""
        self.clock[0] += source_modes.MODE_CHECK_SECONDS
        self.progress.metrics["records"], self.ends = copied, ends
        self._reconsider_mode()


@pytest.fixture
def modes(monkeypatch) -> Modes:
    """The mixin in real-time mode, on a clock of its own that the checks move on."""
    clock = [1000.0]
    monkeypatch.setattr(source_modes.time, "monotonic", lambda: clock[0])
    return Modes(clock)


def test_micro_batches_stay_while_records_arrive_faster_than_real_time_mode_copied(modes):
    arriving, copying = 50_000, 47_000  # records/s: real-time mode falls behind by 3,000 a second
    ends = copied = 0
    for _ in range(30):  # 150 s
        ends, copied = ends + arriving * 5, copied + copying * 5
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]
    assert modes.real_time_capacity is not None and modes.real_time_capacity[0] == copying
    for _ in range(10):  # micro-batches catch up: still 50,000 records/s arriving, no way back
        ends, copied = ends + arriving * 5, min(ends + arriving * 5, copied + 90_000 * 5)
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH] and "fell behind copying 47,000/s" in modes._decide_mode(0).reason
    for _ in range(source_modes.ARRIVING_WINDOW_CHECKS):  # the traffic drops below 80% of what it copied ...
        ends = copied = ends + 30_000 * 5
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]
    ends = copied = ends + 30_000 * 5  # ... for 30 s, and a second check in a row calls for real-time mode
    modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH, rm.REAL_TIME]


def test_the_rate_it_fell_behind_at_is_forgotten_after_a_while(modes):
    modes.mode = rm.ModeDecision(rm.MICRO_BATCH, "falling behind")
    modes.real_time_capacity = (47_000.0, modes.clock[0])
    modes.recent_arriving = (49_500.0,)
    assert modes._decide_mode(0).mode == rm.MICRO_BATCH
    modes.clock[0] += source_modes.CAPACITY_MEMORY_SECONDS + 1
    assert modes._decide_mode(0).mode == rm.REAL_TIME and modes.real_time_capacity is None


def test_a_query_that_fell_behind_over_its_run_is_remembered_even_if_its_last_seconds_copied_more(modes):
    """Real-time mode copies in bursts: in the 5 s before it falls back it may copy more than arrives while its
    backlog grew over its run (at 130,000 records/s on 2 cores it was tried again 21-80 s after falling back)."""
    arriving = 130_000
    ends = copied = 0
    modes.check(ends, copied)  # the real-time query's first check
    # 150,000 and then 400,000 behind (above 4 x 50,000 twice in a row), copying more than arrived in the
    # last 5 s: 106,667 records/s over its run
    for copying in (100_000, 80_000, 140_000):
        ends, copied = ends + arriving * 5, copied + copying * 5
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]
    assert modes.real_time_capacity is not None and modes.real_time_capacity[0] == pytest.approx(106_667, abs=1)
    for _ in range(6):  # micro-batches catch up, records still arriving at 130,000 a second: no way back
        ends, copied = ends + arriving * 5, min(ends + arriving * 5, copied + 300_000 * 5)
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]


def test_a_query_that_kept_up_leaves_no_capacity_behind(modes):
    modes.last_rates = rm.Rates(modes.clock[0], 1_000_000, 1_000_000)
    modes.real_time_rates = rm.Rates(modes.clock[0] - 60, 0, 0)
    modes.arriving, modes.copying = 20_000.0, 20_000.0
    assert modes._real_time_capacity() is None
    modes.mode = rm.ModeDecision(rm.MICRO_BATCH, "a backlog")
    assert modes._real_time_capacity() is None


def test_a_query_that_copied_nothing_while_records_arrived_is_not_tried_again_at_once(modes):
    """A real-time query may fall back before any record it copied is counted (its start took the 5 s
    between two checks): it fell behind at 0 records/s, not "kept up"."""
    arriving = 100_000
    ends = copied = 0
    modes.check(ends, copied)  # the real-time query's first check
    for _ in range(2):  # 500,000 and then 1,000,000 behind, nothing copied
        ends += arriving * 5
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]
    assert modes.real_time_capacity is not None and modes.real_time_capacity[0] == 0
    for _ in range(6):  # micro-batches catch up while records still arrive: no way back to real-time mode
        ends, copied = ends + arriving * 5, ends + arriving * 5
        modes.check(ends, copied)
    assert modes.started == [rm.MICRO_BATCH]



def test_a_dip_in_the_arrival_rate_does_not_bring_real_time_mode_back(modes):
    """At 50% of its maximum on 2 cores, records arrived at 64,000/s on average but unevenly over 5 s
    windows, and auto mode went back to real-time mode 79 s after a fall-back: only a rate below the
    remembered one in every check of the last 30 s counts as the traffic dropping."""
    modes.mode = rm.ModeDecision(rm.MICRO_BATCH, "falling behind")
    modes.real_time_capacity = (50_000.0, modes.clock[0])
    # the checks of the real-time query before it fell back
    modes.last_rates, modes.recent_arriving = rm.Rates(modes.clock[0], 0, 0), (64_000.0,) * 6
    ends = copied = 0
    for arriving in (64_000, 30_000, 30_000, 64_000, 30_000, 30_000, 30_000, 64_000, 30_000, 30_000) * 3:
        ends = copied = ends + arriving * 5
        modes.check(ends, copied)
    assert modes.started == []
    assert "64,000 records/s arriving; real-time mode fell behind copying 50,000/s" in modes._decide_mode(0).reason


def test_a_real_time_run_is_measured_from_its_start_when_its_first_check_comes_late(modes):
    """The driver's loop serves the connectors one after the other: a checkpoint connector starting held it
    for 21 s while a real-time query that had just started fell 900,000 records behind; its first check then
    saw 5 s of catching up, and the fall-back left no rate behind."""
    modes.mode = rm.ModeDecision(rm.MICRO_BATCH, "a backlog")
    arriving = 75_000
    ends = copied = 0
    for _ in range(2):  # micro-batches keep up, nothing remembered: two checks call for real-time mode
        ends = copied = ends + arriving * 5
        modes.check(ends, copied)
    assert modes.started == [rm.REAL_TIME]
    held = 21 - source_modes.MODE_CHECK_SECONDS  # the loop is held: the next check comes 21 s later
    modes.clock[0] += held
    ends, copied = ends + arriving * held, copied + 32_000 * held
    for _ in range(2):  # catching up in bursts: more copied than arrived in each of the next two checks
        ends, copied = ends + arriving * 5, copied + 90_000 * 5
        modes.check(ends, copied)
    assert modes.started == [rm.REAL_TIME, rm.MICRO_BATCH]
    assert modes.real_time_capacity is not None
    assert modes.real_time_capacity[0] == pytest.approx((32_000 * held + 90_000 * 10) / (held + 10), abs=1)
