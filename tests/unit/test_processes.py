"""Finding, checking and stopping our own processes on real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import psutil

from controlplane.infra import processes


def _sleeper(marker: str, seconds: float = 30) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})", marker],
                            start_new_session=True)


def test_a_live_process_is_found_by_its_marker_and_stopped():
    marker = f"mirrorplane-test-{uuid.uuid4().hex}"
    child = _sleeper(marker)
    try:
        assert processes.wait_until(lambda: marker in processes.cmdline(child.pid), 10, interval=0.02)
        assert processes.cmdline(child.pid).startswith(f"{sys.executable} -c import time; time.sleep(30) ")
        assert processes.exists(child.pid) and processes.is_alive(child.pid, marker)
        assert not processes.is_alive(child.pid, "another-marker")
        assert processes.find_processes(marker) == [child.pid]
        assert processes.terminate(child.pid, marker, grace_seconds=5)
        assert not processes.exists(child.pid) and processes.find_processes(marker) == []
    finally:
        child.kill()
        child.wait()


def test_a_zombie_counts_as_exited():
    marker = f"mirrorplane-test-{uuid.uuid4().hex}"
    child = _sleeper(marker, seconds=0)
    try:
        zombie = psutil.Process(child.pid)
        assert processes.wait_until(lambda: zombie.status() == psutil.STATUS_ZOMBIE, 10, interval=0.02)
        assert not processes.exists(child.pid)
        assert processes.cmdline(child.pid) == "" and not processes.is_alive(child.pid, marker)
        assert processes.find_processes(marker) == []
    finally:
        child.wait()


def test_no_process_for_pids_that_cannot_be():
    assert processes.cmdline(0) == "" and processes.cmdline(-1) == ""
    assert not processes.exists(0) and not processes.exists(-1)


def test_the_process_table_reads_as_psutil_reads_it(monkeypatch):
    marker = f"mirrorplane-test-{uuid.uuid4().hex}"
    child = _sleeper(f"{marker} with spaces")
    try:
        assert processes.wait_until(lambda: marker in processes.cmdline(child.pid), 10, interval=0.02)
        from_proc = dict(processes.command_lines())
        monkeypatch.setattr(processes, "_PROC", "/no/such/proc")  # what hosts without /proc read
        from_psutil = dict(processes.command_lines())
        assert from_proc[child.pid] == from_psutil[child.pid] == processes.cmdline(child.pid)
        assert from_proc[child.pid].endswith(f" {marker} with spaces")
        both = set(from_proc) & set(from_psutil)  # processes come and go between the two reads
        assert len(both) > 5 and all(from_proc[pid] == from_psutil[pid] for pid in both - {os.getpid()})
    finally:
        child.kill()
        child.wait()
