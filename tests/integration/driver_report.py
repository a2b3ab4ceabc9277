"""What a mirror's driver was doing, for the message of an integration test that timed out on it."""

from __future__ import annotations

import re
import shutil
import subprocess

from controlplane.infra import processes
from mirrors.services import runtime

LOG_LINES = 30
STACK_FRAMES = 25
# The driver's calls into the JVM (py4j's gateway threads), Spark's query threads and its tasks.
THREADS = re.compile(r'^"(stream execution thread|Thread-\d+|Executor task launch worker)', re.MULTILINE)


def driver_report(name: str) -> str:
    """The tail of the mirror's driver log, without Java stack frames, and the stacks of the threads that
    run its queries and tasks (from `jstack`, when the JDK has it)."""
    parts = [_log_tail(name)]
    for pid in _driver_jvms(name):
        parts.append(_thread_stacks(pid))
    return "\n".join(part for part in parts if part)


def _log_tail(name: str) -> str:
    path = runtime.work_dir(name) / runtime.DRIVER_LOG
    if not path.exists():
        return f"(no driver log at {path})"
    lines = [line for line in path.read_text(errors="replace").splitlines() if not line.lstrip().startswith("at ")]
    return "driver log, last lines:\n" + "\n".join(line[:300] for line in lines[-LOG_LINES:])


def _driver_jvms(name: str) -> list[int]:
    pids = [pid for group in runtime.running_apps().get(name, runtime.AppProcesses()).groups.values()
            for pid in group]
    lines = dict(processes.command_lines())
    return [pid for pid in pids if "java" in lines.get(pid, "").split(" ", 1)[0]]


def _thread_stacks(pid: int) -> str:
    jstack = shutil.which("jstack")
    if jstack is None:
        return ""
    try:
        dump = subprocess.run([jstack, str(pid)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"(jstack {pid}: {error})"
    threads = [block for block in dump.split("\n\n") if THREADS.match(block) and not _idle_gateway(block)]
    kept = ["\n".join(block.splitlines()[:STACK_FRAMES + 2]) for block in threads]
    return f"threads of the driver JVM {pid}:\n" + "\n\n".join(kept)


def _idle_gateway(block: str) -> bool:
    """A py4j gateway thread waiting for the Python side's next call or connection."""
    return ("waitForCommands" in block and "CallCommand" not in block) or "GatewayServer.run" in block
