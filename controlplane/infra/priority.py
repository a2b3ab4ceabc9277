"""CPU priority of the processes we start: a standby driver starts and waits at a lower priority, so that
its start yields the cores to running mirrors, and runs at full priority once a mirror claims it.

Linux keeps a nice value per thread, and a new thread inherits its creator's: a process started under
`nice` runs niced in every thread, and giving it its priority back means renicing each of its threads.
Lowering a nice value needs root (CAP_SYS_NICE) or an RLIMIT_NICE that allows it (systemd's LimitNICE=);
without either a standby is started at full priority, as it could never be given its priority back.

With the kernel's autogroup scheduling (on by default in most distributions' kernels), the scheduler first
shares the cores between sessions, and a thread's nice value only counts against threads of its own
session. Every process we start has a session of its own (controlplane.infra.processes.spawn), so its
threads' nice values alone change nothing against the mirrors: the session's nice value
(`/proc/<pid>/autogroup`) is lowered beside them, and given back with them.
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import psutil

log = logging.getLogger(__name__)


def own_niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def can_restore(niceness: int | None = None) -> bool:
    """Whether this process may set a thread back to its own nice value (`niceness`, by default its own)."""
    if os.geteuid() == 0:
        return True
    target = own_niceness() if niceness is None else niceness
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    return soft == resource.RLIM_INFINITY or target >= 20 - soft


def lowered(argv: Sequence[str], increment: int) -> list[str]:
    """`argv` run `increment` nice levels below this process; as it is when 0 or when it could not be
    given its priority back."""
    if increment <= 0:
        return list(argv)
    if not can_restore():
        log.info("processes start at full priority: lowering a nice value needs root or RLIMIT_NICE (LimitNICE=)")
        return list(argv)
    return ["nice", "-n", str(increment), *argv]


def with_descendants(pids: Iterable[int]) -> set[int]:
    """`pids` and every live process started under them."""
    found = set(pids)
    for pid in list(found):
        try:
            found.update(child.pid for child in psutil.Process(pid).children(recursive=True))
        except psutil.Error:
            continue
    return found


def threads(pid: int) -> list[int]:
    try:
        return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return []


def niceness_of(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


def niceness_by_thread(pids: Iterable[int]) -> dict[int, int]:
    """The nice value of every live thread of `pids` and of their descendants, by thread id."""
    found = {tid: niceness_of(tid) for pid in with_descendants(pids) for tid in threads(pid)}
    return {tid: nice for tid, nice in found.items() if nice is not None}


def restore(pids: Iterable[int], passes: int = 3) -> int:
    """Set every thread of `pids` and of their descendants to this process's nice value; returns how many
    threads it changed.

    A thread started during a pass by a thread still niced would inherit the lower priority: passes
    repeat until one finds nothing left to change."""
    target = own_niceness()
    pids = list(pids)
    changed = 0
    for _ in range(passes):
        this_pass = 0
        for tid, current in niceness_by_thread(pids).items():
            if current == target:
                continue
            try:
                os.setpriority(os.PRIO_PROCESS, tid, target)
                this_pass += 1
            except ProcessLookupError:
                continue  # the thread ended
            except PermissionError:
                log.warning("could not give thread %d its priority back (nice %d to %d): not permitted",
                            tid, current, target)
                return changed + this_pass
        changed += this_pass
        if this_pass == 0:
            break
    return changed


AUTOGROUP_ENABLED = Path("/proc/sys/kernel/sched_autogroup_enabled")


def session_niceness(pid: int | str = "self") -> int | None:
    """The nice value of the autogroup (session) of `pid`; None without autogroup scheduling or process."""
    try:
        if AUTOGROUP_ENABLED.read_text().strip() != "1":
            return None
        # "/autogroup-123 nice 10"
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def set_session_niceness(pid: int, niceness: int) -> bool:
    """Give the session of `pid`, when it is not this process's, the nice value `niceness`.

    The kernel takes one such change per 0.1 s from a process without CAP_SYS_ADMIN (EAGAIN), and a
    value below 0 only with CAP_SYS_NICE."""
    if session_niceness(pid) is None:
        return False
    try:
        if os.getsid(pid) == os.getsid(0):
            return False  # this very session: the worker itself would yield its cores
    except ProcessLookupError:
        return False
    for _ in range(10):
        try:
            Path(f"/proc/{pid}/autogroup").write_text(str(niceness))
            return True
        except OSError as error:
            if error.errno != errno.EAGAIN:
                log.warning("could not set the session nice value of process %d to %d: %s", pid, niceness, error)
                return False
            time.sleep(0.1)
    return False


def lower_session(pid: int, increment: int) -> bool:
    """Lower the session of `pid` (started by us, in a session of its own) by `increment` below this
    process's session; whether it was lowered."""
    own = session_niceness()
    if increment <= 0 or own is None or (own < 0 and not can_restore(own)):
        return False
    return set_session_niceness(pid, min(19, own + increment))


def restore_session(pid: int) -> bool:
    """Give the session of `pid` this process's session nice value back; whether it changed."""
    own, current = session_niceness(), session_niceness(pid)
    if own is None or current is None or current == own:
        return False
    return set_session_niceness(pid, own)
