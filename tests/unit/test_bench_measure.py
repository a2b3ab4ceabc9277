"""Resource sampling through psutil: reading real processes and CPU/RSS accounting over a process group."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from bench.measure import CLOCK_TICKS, PAGE_SIZE, ProcStat, ResourceSampler, Usage, in_groups, read
from mirrorcore.waiting import wait_until

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def _wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_read_gives_ids_times_and_rss_of_a_real_process(tmp_path):
    """A child in a session of its own, its command name with a space and parentheses for good measure."""
    program = tmp_path / "java (main) x"
    program.symlink_to(os.path.realpath(sys.executable))
    child = subprocess.Popen([str(program), "-c", BURN.format(seconds=0.3) + "time.sleep(30)"],
                             start_new_session=True)
    try:
        process = psutil.Process(child.pid)
        _wait_for(lambda: process.cpu_times().user + process.cpu_times().system >= 0.3)
        stat = read(process)
        assert process.name() == "java (main) x"
        assert (stat.pid, stat.ppid, stat.pgid, stat.child_ticks) == (child.pid, os.getpid(), child.pid, 0)
        assert stat.state in (psutil.STATUS_RUNNING, psutil.STATUS_SLEEPING)
        assert 0.3 * CLOCK_TICKS <= stat.ticks <= 2 * CLOCK_TICKS
        assert stat.rss_pages * PAGE_SIZE > 2**20
    finally:
        child.kill()
        child.wait()


def test_read_keeps_the_cpu_of_reaped_children_apart():
    """A parent that reaps a child burning 0.3 s: the child's CPU is in child_ticks, not in ticks."""
    code = ("import subprocess, sys, time\n"
            f"subprocess.run([sys.executable, '-c', {BURN.format(seconds=0.3)!r}])\n"
            "print('reaped', flush=True)\ntime.sleep(30)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout.readline() == "reaped\n"
        stat = read(psutil.Process(parent.pid))
        assert stat.child_ticks >= 0.3 * CLOCK_TICKS
        assert stat.ticks < stat.child_ticks
    finally:
        parent.kill()
        parent.wait()


def test_read_gives_a_zombie_with_its_final_cpu_until_it_is_reaped():
    child = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=0.2)], start_new_session=True)
    process = psutil.Process(child.pid)
    try:
        _wait_for(lambda: process.status() == psutil.STATUS_ZOMBIE)
        stat = read(process)
        assert stat.state == psutil.STATUS_ZOMBIE and stat.pgid == child.pid
        assert stat.ticks >= 0.2 * CLOCK_TICKS and stat.rss_pages == 0
    finally:
        child.wait()


def _stat(pid: int, ppid: int, ticks: int, child_ticks: int = 0, rss_pages: int = 0, pgid: int = 10) -> ProcStat:
    return ProcStat(pid=pid, ppid=ppid, pgid=pgid, state="S", ticks=ticks, child_ticks=child_ticks,
                    rss_pages=rss_pages)


def test_usage_counts_reaped_children_once_and_departed_leaders():
    usage = Usage()
    usage.update([])  # nothing yet: the candidate has not started
    usage.update([_stat(10, 1, 100, rss_pages=1000), _stat(11, 10, 50, rss_pages=500)])
    assert usage.cpu_seconds == 150 / CLOCK_TICKS
    assert usage.peak_rss_bytes == 1500 * PAGE_SIZE
    # the child exits and its parent (in the group) reaps it: its time is now in the parent's cutime
    usage.update([_stat(10, 1, 120, child_ticks=60, rss_pages=800)])
    assert usage.cpu_seconds == 180 / CLOCK_TICKS
    assert usage.peak_rss_bytes == 1500 * PAGE_SIZE, "the peak stays"
    # the leader exits, reaped outside the group (by the harness): its last reading is kept
    usage.update([])
    assert usage.cpu_seconds == 180 / CLOCK_TICKS


def test_usage_is_the_growth_since_the_first_sample():
    usage = Usage()
    usage.update([_stat(20, 1, 1000)])  # a control plane running before the run
    usage.update([_stat(20, 1, 1030)])
    assert usage.cpu_seconds == 30 / CLOCK_TICKS


def test_in_groups_selects_by_process_group():
    stats = [_stat(1, 0, 0, pgid=1), _stat(2, 1, 0, pgid=7), _stat(3, 2, 0, pgid=7)]
    assert [s.pid for s in in_groups(stats, {7})] == [2, 3]


def test_sampler_measures_a_real_process_group():
    """A child that burns ~0.3 s of CPU in its own session: the sampler sees its CPU and memory.

    The child stays alive until the sampler has seen its CPU: beside the integration tests this lane
    runs in a lowered session, where the sampler's thread may not get a core while a short child lives.
    The sampler takes its first sample before the child starts, so the child counts from 0: a child
    already running at the first sample counts from that reading, which in the lowered lane came after
    it had burnt most of its CPU (0.11 s seen of 0.3)."""
    children: list[int] = []
    sampler = ResourceSampler({"child": lambda: children}, interval=0.05).start()
    child = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=0.3) + "time.sleep(60)"],
                             start_new_session=True)
    children.append(child.pid)
    usage: dict = {}

    def seen() -> bool:
        usage.update(sampler.snapshot()["child"])
        return usage["cpu_seconds"] >= 0.2

    try:
        wait_until(seen, 30, interval=0.05)
    finally:
        sampler.stop()
        child.kill()
        child.wait(10)
    assert 0.2 <= usage["cpu_seconds"] <= 2.0
    assert usage["peak_rss_mb"] > 1
    assert os.getpgid(os.getpid()) != child.pid


def test_a_service_does_not_count_the_children_it_reaps():
    """The control plane's worker reaps a Spark application of another group: its cutime grows by the
    application's CPU, which is not the control plane's."""
    usage = Usage(reaped=False)
    usage.update([_stat(30, 1, 500, child_ticks=0)])  # the worker before the run
    usage.update([_stat(30, 1, 520, child_ticks=0)])
    usage.update([_stat(30, 1, 530, child_ticks=1400)])  # it reaped the application: 14 s in cutime
    assert usage.cpu_seconds == 30 / CLOCK_TICKS
    candidate = Usage()
    candidate.update([_stat(30, 1, 500)])
    candidate.update([_stat(30, 1, 530, child_ticks=1400)])
    assert candidate.cpu_seconds == 1430 / CLOCK_TICKS, "a candidate's own children are its CPU"


def test_a_process_present_at_the_start_counts_from_its_first_reading_even_when_reaped():
    usage = Usage()
    usage.update([_stat(10, 1, 100), _stat(11, 10, 40)])
    usage.update([_stat(10, 1, 110), _stat(11, 10, 60)])
    assert usage.cpu_seconds == 30 / CLOCK_TICKS
    usage.update([_stat(10, 1, 115, child_ticks=65)])  # the child used 5 more ticks, then was reaped
    assert usage.cpu_seconds == (15 + 25) / CLOCK_TICKS


def test_the_sampler_treats_named_sets_as_services():
    sampler = ResourceSampler({"candidate": lambda: [], "control_plane": lambda: []}, services=["control_plane"])
    assert sampler.usage["candidate"].reaped and not sampler.usage["control_plane"].reaped


def test_machine_busy_share_over_all_cores():
    from bench.measure import busy_share, machine_cpu

    assert busy_share((10.0, 100.0), (40.0, 160.0)) == 50.0
    assert busy_share((10.0, 100.0), (10.0, 100.0)) is None
    busy, total = machine_cpu()
    assert 0 <= busy <= total
