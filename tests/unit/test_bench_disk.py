"""The disk's share of a latency tail: per-second I/O pressure and writeback lined up with the slowest records."""

from __future__ import annotations

import itertools
import time

from bench import disk
from bench.disk import DiskSample, DiskSampler
from bench.tail import tail_summary


def _samples(stalls_ms: dict[int, float], written_mb: dict[int, float], seconds: int = 10,
             cpu_ms: dict[int, float] | None = None) -> list[DiskSample]:
    """Ten samples a second from epoch ms 0; a second's stall, writeback and CPU wait land in its first
    interval."""
    samples, stalled, waiting, written, cpu = [DiskSample(0.0, 0, 0, 0)], 0, 0, 0, 0
    for tick in range(1, seconds * 10 + 1):
        second = (tick - 1) // 10
        if tick % 10 == 1:
            stalled += int(stalls_ms.get(second, 0.0) * 1000)
            waiting += int(stalls_ms.get(second, 0.0) * 2000)
            written += int(written_mb.get(second, 0.0) * 1024)
            cpu += int((cpu_ms or {}).get(second, 0.0) * 1000)
        samples.append(DiskSample(tick * 100.0 - 1, waiting, stalled, written, cpu))
    return samples


def test_each_second_gets_the_stall_and_the_writeback_that_ended_in_it():
    seconds = disk.per_second(_samples({3: 150.0}, {3: 85.0, 4: 0.5}, cpu_ms={4: 640.0}), start_ms=0.0)
    assert seconds[3] == {"io_stall_ms": 150.0, "io_wait_ms": 300.0, "written_mb": 85.0, "cpu_wait_ms": 0.0}
    assert seconds[4] == {"io_stall_ms": 0.0, "io_wait_ms": 0.0, "written_mb": 0.5, "cpu_wait_ms": 640.0}
    assert disk.per_second(_samples({}, {}), start_ms=5_000.0).keys() == set(range(5))


def test_the_slowest_records_in_a_second_the_disk_stalled_are_counted_as_its():
    stamps = [float(i * 10) for i in range(1000)]  # 10 s, 100 records a second
    latencies = [5.0] * 1000
    for i in range(300, 306):  # second 3: the disk's
        latencies[i] = 200.0
    for i in range(700, 704):  # second 7: not the disk's
        latencies[i] = 150.0
    tail = disk.attribute(tail_summary(stamps, latencies, [0] * 1000), _samples({3: 120.0, 7: 5.0}, {3: 80.0}))
    assert (tail["records"], tail["span_seconds"], tail["slow_per_second"]) == (10, 10, [[3, 6], [7, 4]])
    assert (tail["during_disk_stall"], tail["disk_stall_max_ms"]) == (6, 120.0)
    assert tail["worst_seconds"][0] == {"second": 3, "records": 6, "max_ms": 200.0, "io_stall_ms": 120.0,
                                        "io_wait_ms": 240.0, "written_mb": 80.0, "cpu_wait_ms": 0.0}
    assert tail["disk_median_second"] == {"io_stall_ms": 0.0, "io_wait_ms": 0.0, "written_mb": 0.0,
                                          "cpu_wait_ms": 0.0}
    assert tail["writeback_bursts"] == [[3, 80.0]]


def test_writeback_bursts_of_both_brokers_at_once_are_told_from_one_brokers():
    """The kernel writes a file back once it has been dirty for 30 s: two brokers whose files were first
    dirtied within a second of each other are written back in the same second, about twice the data."""
    stamps = [float(i * 10) for i in range(4000)]  # 40 s, 100 records a second
    tail = tail_summary(stamps, [5.0] * 4000, [0] * 4000)
    together = disk.attribute(tail, _samples({}, {5: 168.0, 36: 157.0, 20: 0.4}, seconds=45))
    apart = disk.attribute(tail, _samples({}, {5: 84.0, 21: 84.0, 36: 84.0}, seconds=45))
    assert together["writeback_bursts"] == [[5, 168.0], [36, 157.0]]
    assert apart["writeback_bursts"] == [[5, 84.0], [21, 84.0], [36, 84.0]]
    late = disk.attribute(tail, _samples({}, {41: 90.0}, seconds=45))
    assert late["writeback_bursts"] == [], "after the measured seconds"


def test_no_disk_figures_without_samples():
    tail = tail_summary([0.0, 10.0], [5.0, 6.0], [0, 0])
    assert disk.attribute(tail, []) == tail
    assert disk.attribute({}, _samples({}, {})) == {}


def test_the_sampler_reads_this_machines_counters():
    sampler = DiskSampler(interval=0.02).start()
    time.sleep(0.2)
    samples = sampler.stop()
    assert len(samples) >= 3 and all(b.at_ms >= a.at_ms for a, b in itertools.pairwise(samples))
    assert all(b.stalled_us >= a.stalled_us and b.written_kb >= a.written_kb and b.cpu_waiting_us >= a.cpu_waiting_us
               for a, b in itertools.pairwise(samples))
    assert DiskSampler().stop() == [], "a run that failed before it started the sampler"


def test_the_report_says_how_much_of_the_tail_the_disk_held_up():
    from bench.report_markdown import _tail

    base = {"records": 3003, "seconds": 11, "partitions": 8, "after_reader_pause": 0}
    held = base | {"worst_seconds": [{"second": 11, "records": 1450, "max_ms": 209.5, "io_stall_ms": 121.0,
                                      "io_wait_ms": 296.0, "written_mb": 85.0}],
                   "during_disk_stall": 2265, "disk_stall_max_ms": 121.0}
    assert _tail(held) == ("3,003 records in 11 s over 8 partitions (second 11: 1,450, max 210 ms, disk: 121 ms "
                           "stalled, 85 MB written back; none after a reader pause; 2,265 in seconds the disk stalled "
                           "every task for 20 ms or more (up to 121 ms))")
    free = base | {"worst_seconds": [{"second": 3, "records": 900, "max_ms": 150.0}], "during_disk_stall": 0}
    assert _tail(free).endswith("max 150 ms; none after a reader pause; none in a second the disk stalled)")
    crowded = base | {"worst_seconds": [{"second": 3, "records": 900, "max_ms": 150.0, "io_stall_ms": 0.0,
                                         "written_mb": 0.0, "cpu_wait_ms": 812.0}], "during_disk_stall": 0}
    assert "disk: 0 ms stalled, 0 MB written back, a task waiting for a core 812 ms;" in _tail(crowded)
    assert _tail(base | {"worst_seconds": []}).endswith("max n/a ms; none after a reader pause)")
    bursts = held | {"writeback_bursts": [[11, 168.1], [42, 157.4]]}
    assert _tail(bursts).endswith("(up to 121 ms); written back: 168 MB in second 11, 157 MB in second 42)")
    assert _tail(free | {"writeback_bursts": []}).endswith(
        "none in a second the disk stalled; written back: no second of 20 MB or more)")
