"""Standby drivers wait niced and get their priority back, in every thread and session, once claimed."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

import psutil
import pytest

from controlplane.infra import priority, processes

# A process with three threads of its own and a child process with one more.
THREADED = """
import subprocess, sys, threading, time
code = "import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)"
child = subprocess.Popen([sys.executable, "-c", code])
for _ in range(3):
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print(child.pid, flush=True)
time.sleep(60)
"""


def test_a_command_is_lowered_by_the_increment_unless_it_is_zero():
    assert priority.lowered(["java", "-version"], 0) == ["java", "-version"]
    if priority.can_restore():
        assert priority.lowered(["java", "-version"], 10) == ["nice", "-n", "10", "java", "-version"]


def test_a_command_is_not_lowered_when_its_priority_could_not_be_given_back(monkeypatch):
    monkeypatch.setattr(priority, "can_restore", lambda niceness=None: False)
    assert priority.lowered(["java"], 10) == ["java"]


@pytest.mark.parametrize(("euid", "limit", "niceness", "expected"), [
    (0, 0, 0, True),            # root
    (1000, 0, 0, False),        # the default RLIMIT_NICE: a nice value can only go up
    (1000, 20, 0, True),        # LimitNICE=0 in systemd's terms (RLIMIT_NICE 20): back to 0 is allowed
    (1000, 15, 0, False),
    (1000, 15, 5, True),
])
def test_restoring_needs_root_or_an_rlimit_nice_that_allows_it(monkeypatch, euid, limit, niceness, expected):
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (limit, limit))
    assert priority.can_restore(niceness) is expected


def test_every_thread_of_a_process_and_its_children_gets_its_priority_back():
    own = priority.own_niceness()
    process = subprocess.Popen(["nice", "-n", "7", sys.executable, "-c", THREADED], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        child = int(process.stdout.readline())
        deadline = time.monotonic() + 10
        while len(priority.threads(child)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        before = priority.niceness_by_thread([process.pid, child])
        assert len(before) >= 6 and set(before.values()) == {own + 7}, before
        assert priority.with_descendants([process.pid]) >= {process.pid, child}

        changed = priority.restore([process.pid])

        after = priority.niceness_by_thread([process.pid, child])
        if priority.can_restore():
            assert changed == len(before) and set(after.values()) == {own}, after
        else:
            assert set(after.values()) == {own + 7}, after
    finally:
        for pid in (child, process.pid):
            if pid:
                os.kill(pid, signal.SIGKILL)
        process.wait()


def test_restoring_a_process_that_is_gone_changes_nothing():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert priority.restore([process.pid]) == 0


# -- the session's nice value (the kernel's autogroup scheduling) ---------------------------------

BURN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def test_a_lowered_session_yields_the_cores_to_other_sessions_and_gets_its_priority_back(tmp_path):
    """Busy processes in sessions of their own, one more than the cores, and one more in a lowered
    session: that one gets a small share while the others run. Its threads' nice value alone would not
    do it: the others are in sessions of their own."""
    own = priority.session_niceness()
    burners = [processes.spawn([sys.executable, "-c", BURN.format(seconds=3)], tmp_path / f"{i}.log")
               for i in range(os.cpu_count() + 1)]
    lowered = processes.spawn(["nice", "-n", "10", sys.executable, "-c", BURN.format(seconds=3)],
                              tmp_path / "lowered.log")
    try:
        if own is None:  # no autogroup scheduling: the threads' nice value is all there is
            assert not priority.lower_session(lowered.pid, 10)
            return
        assert priority.lower_session(lowered.pid, 10)
        assert priority.session_niceness(lowered.pid) == min(19, own + 10)
        time.sleep(2)
        shares = sorted(cpu_seconds(b.pid) for b in burners)
        mine = cpu_seconds(lowered.pid)
        assert mine < shares[len(shares) // 2] / 3, (mine, shares)

        assert priority.restore_session(lowered.pid)
        assert priority.session_niceness(lowered.pid) == own
        assert not priority.restore_session(lowered.pid), "nothing left to change"
    finally:
        for process in (*burners, lowered):
            process.kill()
            process.wait()


def test_this_session_is_never_lowered():
    before = priority.session_niceness()
    assert not priority.set_session_niceness(os.getpid(), 10)
    assert priority.session_niceness() == before


def test_a_process_that_is_gone_has_no_session_to_lower():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert not priority.lower_session(process.pid, 10)
    assert priority.session_niceness(process.pid) is None
