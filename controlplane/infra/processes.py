"""Starting, finding and stopping the local processes we own, and nothing else."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import psutil

from mirrorcore.waiting import wait_until

_EXITED = frozenset({psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD})
_PROC = "/proc"
MAX_PORTS_PASSED_OVER = 1000
_handed_out: set[int] = set()  # every port free_ports returned in this process
_handed_out_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on `host` (the kernel picks it)."""
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct free ports, none of them handed out before by this process. All sockets stay
    open until every port is chosen, and a port the kernel offers again once an earlier call closed its
    socket is passed over: two brokers started together were once given the same port, and the second,
    failing to bind it, was taken for ready because the first answered there."""
    sockets: list[socket.socket] = []
    chosen: list[int] = []
    with _handed_out_lock:
        try:
            while len(chosen) < count:
                if len(sockets) >= count + MAX_PORTS_PASSED_OVER:
                    raise OSError(f"no free port on {host} that this process has not handed out already")
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(sock)
                sock.bind((host, 0))  # held open, so the kernel offers another port next
                port = sock.getsockname()[1]
                if port not in _handed_out:
                    chosen.append(port)
            _handed_out.update(chosen)
            return chosen
        finally:
            for sock in sockets:
                sock.close()


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def spawn(
    argv: Sequence[str],
    log_path: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen:
    """Start `argv` in its own session (so a terminal Ctrl-C does not reach it) with output to a log."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )


def cmdline(pid: int) -> str:
    """The command line of a live process, '' when it is gone or a zombie."""
    if pid <= 0:
        return ""
    try:
        return _command_line(psutil.Process(pid))
    except psutil.Error:
        return ""


def _command_line(process: psutil.Process) -> str:
    try:
        with process.oneshot():
            if process.status() in _EXITED:
                return ""
            return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def exists(pid: int) -> bool:
    """True while `pid` is a process that has not exited (zombies count as exited)."""
    if pid <= 0:
        return False
    try:
        return psutil.Process(pid).status() not in _EXITED
    except psutil.Error:
        return False


def is_alive(pid: int, marker: str = "") -> bool:
    """True when `pid` runs and, if `marker` is given, its command line contains it.

    The marker guards against a recycled pid: we only ever signal processes we started. While a
    process is inside execve (launchers such as `java` and `spark-submit` re-exec themselves) its
    command line reads empty for a moment, so an empty read is retried before calling it dead.
    """
    for _ in range(20):
        line = cmdline(pid)
        if line:
            return marker in line
        if not exists(pid):
            return False
        time.sleep(0.05)
    return False


def find_processes(*markers: str) -> list[int]:
    """Pids of live processes whose command line contains one of `markers` (one pass over the table)."""
    own = os.getpid()
    return sorted(pid for pid, line in command_lines() if pid != own and any(marker in line for marker in markers))


def command_lines() -> Iterator[tuple[int, str]]:
    """Each live process's pid and command line. Linux's are read straight from /proc (a zombie's
    reads empty there): a tenth of psutil's cost per process, and the supervision pass scans the
    table twice every few seconds."""
    if not os.path.isdir(_PROC):
        for process in psutil.process_iter():
            line = _command_line(process)
            if line:
                yield process.pid, line
        return
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            with open(os.path.join(entry.path, "cmdline"), "rb") as file:
                raw = file.read()
        except OSError:  # exited since the listing
            continue
        if raw:  # kernel threads and zombies have none
            yield int(entry.name), os.fsdecode(raw.removesuffix(b"\0")).replace("\0", " ")


def reap(pid: int) -> None:
    """Collect the exit status of our own child so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def terminate(pid: int, marker: str, grace_seconds: float = 10.0) -> bool:
    """Stop the process group led by `pid`: SIGTERM, then SIGKILL after the grace period.

    Returns True when something was stopped. Does nothing unless the process carries `marker`.
    """
    if not is_alive(pid, marker):
        reap(pid)
        return False
    _signal_group(pid, signal.SIGTERM)
    if not wait_until(lambda: not is_alive(pid, marker), grace_seconds, on_tick=lambda: reap(pid)):
        _signal_group(pid, signal.SIGKILL)
        wait_until(lambda: not is_alive(pid, marker), 5.0, on_tick=lambda: reap(pid))
    reap(pid)
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(os.getpgid(pid), sig)
    except ProcessLookupError:
        return
    except PermissionError:
        os.kill(pid, sig)
