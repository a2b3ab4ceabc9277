"""`make test` in two lanes at once: the integration tests (real clusters, Spark, a Celery worker) in the
foreground, and beside them the Java, unit and API tests, which need none of those, with PostgreSQL's and
the YARN tests (LANE_INTEGRATION_TESTS).

The integration tests leave about a third of two cores idle while they wait on Spark and the brokers;
the second lane runs in a session of its own whose priority is lowered (the kernel shares the cores
between sessions first: controlplane/infra/priority.py), so it takes those idle cycles rather than the
integration tests' share. It has a test folder of its own (MIRRORPLANE_TEST_VAR_DIR): its own database and
data folder. Its output is printed after the integration tests'; then the integration tests' failures once
more, and the least free disk space seen (a full disk shows as SQLite's "disk I/O error" and as brokers that
stop). The exit status is non-zero when either lane failed.

`python -m tests.lanes [pytest arguments for the integration lane]`; PYTEST_ADDOPTS applies to the
integration lane only.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from controlplane.infra import priority

ROOT = Path(__file__).resolve().parents[1]
LANE_NICENESS = 10
LANE_VAR_DIR = ROOT / "var" / "test-lane"
LANE_LOG = ROOT / "var" / "test-lane.log"
# Below this much free space on the repository's file system the suite does not start: its clusters,
# Spark checkpoints and HDFS take several GB at their peak.
MIN_FREE_BYTES = 8 * 2**30
GB = 1e9
# The integration lane lists its slowest tests and fixtures: the suite's time is watched (CI allows 45 min).
SLOWEST_SHOWN = 30

# pytest's closing line, e.g. "===== 3 passed, 1 failed in 10.02s =====", and terminal colour codes.
CLOSING_LINE = re.compile(r"=+ .*\b(passed|failed|errors?|skipped|deselected|no tests ran)\b.* in [0-9.]+s")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")

# Both lanes name the test settings: importing `controlplane` (its Celery app) sets DJANGO_SETTINGS_MODULE
# to the product's settings in this process's environment, which pytest-django would prefer to the ini
# file's, and the lanes would share one test database.
TEST_SETTINGS = "--ds=tests.settings"

# Integration tests that run in the second lane, in one pytest run with its unit and API tests (pytest
# node ids or their prefixes). PostgreSQL and the API suite on it need neither the clusters nor Spark. The
# YARN tests bring their own HDFS and YARN daemons and wait minutes, not seconds, for what they check: in
# the second lane they start a stack of their own (clusters, Redis, a Celery worker) in its test folder
# and run beside the integration lane instead of lengthening it (about 700 s of its 2,800).
LANE_INTEGRATION_TESTS = [
    "tests/integration/test_postgres.py",
    "tests/integration/test_yarn_stack.py",
    "tests/integration/test_yarn_mirrors.py",
    "tests/integration/test_checkpoint_loss.py::test_checkpoint_deleted_under_a_running_mirror[yarn]",
]


def lane_commands() -> list[list[str]]:
    python = sys.executable
    return [[python, "-m", "controlplane.infra.spark", "test-java"],
            [python, "-m", "pytest", TEST_SETTINGS, "tests/unit", "tests/api", *LANE_INTEGRATION_TESTS,
             "-p", "no:cacheprovider"]]


def integration_command(argv: list[str]) -> list[str]:
    deselected = [f"--deselect={node}" for node in LANE_INTEGRATION_TESTS]
    color = ["--color=yes"] if sys.stdout.isatty() else []
    return [sys.executable, "-m", "pytest", TEST_SETTINGS, "tests/integration", *deselected, *color,
            f"--durations={SLOWEST_SHOWN}", *argv]


def run_lane() -> int:
    """The second lane's commands, one after the other; the first failure's exit status."""
    status = 0
    for argv in lane_commands():
        status = status or subprocess.call(argv, cwd=ROOT)
    return status


def start_lane(log: IO[bytes], command: list[str]) -> subprocess.Popen:
    """`command` in a session of its own, its priority lowered: its threads' nice value and, where the
    kernel has autogroup scheduling, its session's (priority.lower_session)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    env["MIRRORPLANE_TEST_VAR_DIR"] = str(LANE_VAR_DIR)
    lane = subprocess.Popen(["nice", "-n", str(LANE_NICENESS), *command], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, cwd=ROOT, start_new_session=True)
    priority.lower_session(lane.pid, LANE_NICENESS)
    return lane


class DiskWatch:
    """The least free space on `path`'s file system, sampled every `interval` seconds until stopped;
    `free`: a reading just taken, if any."""

    def __init__(self, path: Path, interval: float = 5.0, free: int | None = None) -> None:
        self.path, self.interval = path, interval
        self.least = shutil.disk_usage(path).free if free is None else free
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="disk-watch", daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.least = min(self.least, shutil.disk_usage(self.path).free)

    def __enter__(self) -> DiskWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self.least = min(self.least, shutil.disk_usage(self.path).free)


def is_summary_line(line: str) -> bool:
    """pytest's short summary lines (FAILED / ERROR) and its closing line."""
    return line.startswith(("FAILED ", "ERROR ")) or bool(CLOSING_LINE.match(line))


def run_echoing(command: list[str]) -> tuple[int, list[str]]:
    """`command` with its output passed through as it comes (pytest's progress dots too); its exit status
    and its summary lines (is_summary_line)."""
    kept: list[str] = []
    pending = b""
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        assert process.stdout is not None
        while chunk := os.read(process.stdout.fileno(), 65536):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                line = COLOUR.sub("", raw.decode(errors="replace")).rstrip()
                if is_summary_line(line):
                    kept.append(line)
    last = COLOUR.sub("", pending.decode(errors="replace")).rstrip()
    return process.returncode, kept + ([last] if is_summary_line(last) else [])


def run(integration: list[str], lane: list[str], lane_log: Path) -> int:
    """`integration` in the foreground and `lane` beside it (start_lane); the lane's output, kept in
    `lane_log`, is printed after, then the integration tests' failure lines and the least free disk space;
    non-zero when either failed."""
    free = shutil.disk_usage(ROOT).free
    if free < MIN_FREE_BYTES:
        print(f"only {free / GB:.1f} GB free on the file system of {ROOT}: the tests need at least "
              f"{MIN_FREE_BYTES / GB:.0f} GB (Kafka logs, Spark checkpoints, HDFS); free some and run again",
              file=sys.stderr, flush=True)
        return 1
    lane_log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with lane_log.open("wb") as log, DiskWatch(ROOT, free=free) as disk:
        beside = start_lane(log, lane)
        try:
            integration_status, summary = run_echoing(integration)
            if beside.poll() is None:
                print("waiting for the Java, unit and API tests ...", flush=True)
            lane_status = beside.wait()
        except KeyboardInterrupt:  # Ctrl-C reaches the integration tests, not the lane's own session
            os.killpg(beside.pid, signal.SIGTERM)
            beside.wait()
            raise
    print(f"\n===== Java, unit and API tests (run beside the integration tests; {lane_log}) =====", flush=True)
    sys.stdout.write(lane_log.read_text(errors="replace"))
    if integration_status != 0:
        print("\n===== integration tests: failures (the full report is above the Java, unit and API tests) =====")
        print("\n".join(summary) or f"no summary line: pytest exited with status {integration_status}")

    def outcome(status: int) -> str:
        return "passed" if status == 0 else f"FAILED (exit status {status})"

    print(f"\nintegration tests: {outcome(integration_status)}; Java, unit and API tests: {outcome(lane_status)}; "
          f"{time.monotonic() - started:.0f} s in all; least free disk space {disk.least / GB:.1f} GB "
          f"(at the start {free / GB:.1f} GB)", flush=True)
    return integration_status or lane_status


def main(argv: list[str]) -> int:
    if argv == ["--lane"]:
        return run_lane()
    return run(integration_command(argv), [sys.executable, "-m", "tests.lanes", "--lane"], LANE_LOG)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
