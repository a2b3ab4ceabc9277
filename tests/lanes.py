"""`make test` in two lanes at once: the integration tests (real clusters, Spark, a Celery worker) in the
foreground, and beside them the Java, unit and API tests, which need none of those (and PostgreSQL's).

The integration tests leave about a third of two cores idle while they wait on Spark and the brokers;
the second lane runs in a session of its own whose priority is lowered (the kernel shares the cores
between sessions first: controlplane/infra/priority.py), so it takes those idle cycles rather than the
integration tests' share. It has a test folder of its own (MIRRORPLANE_TEST_VAR_DIR): its own database and
data folder. Its output is printed after the integration tests'; the exit status is non-zero when either
lane failed.

`python -m tests.lanes [pytest arguments for the integration lane]`; PYTEST_ADDOPTS applies to the
integration lane only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from controlplane.infra import priority

ROOT = Path(__file__).resolve().parents[1]
LANE_NICENESS = 10
LANE_VAR_DIR = ROOT / "var" / "test-lane"
LANE_LOG = ROOT / "var" / "test-lane.log"


# Integration tests that need neither the clusters nor Spark nor a timing of their own (PostgreSQL and the
# API suite on it) run in the second lane as well.
LANE_INTEGRATION_TESTS = ["tests/integration/test_postgres.py"]


def lane_commands() -> list[list[str]]:
    python = sys.executable
    return [[python, "-m", "controlplane.infra.spark", "test-java"],
            [python, "-m", "pytest", "tests/unit", "tests/api", *LANE_INTEGRATION_TESTS, "-p", "no:cacheprovider"]]


def integration_command(argv: list[str]) -> list[str]:
    ignored = [f"--ignore={path}" for path in LANE_INTEGRATION_TESTS]
    return [sys.executable, "-m", "pytest", "tests/integration", *ignored, *argv]


def run_lane() -> int:
    """The second lane's commands, one after the other; the first failure's exit status."""
    status = 0
    for argv in lane_commands():
        status = status or subprocess.call(argv, cwd=ROOT)
    return status


def start_lane(log, command: list[str]) -> subprocess.Popen:
    """`command` in a session of its own, its priority lowered: its threads' nice value and, where the
    kernel has autogroup scheduling, its session's (priority.lower_session)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    env["MIRRORPLANE_TEST_VAR_DIR"] = str(LANE_VAR_DIR)
    lane = subprocess.Popen(["nice", "-n", str(LANE_NICENESS), *command], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, cwd=ROOT, start_new_session=True)
    priority.lower_session(lane.pid, LANE_NICENESS)
    return lane


def run(integration: list[str], lane: list[str], lane_log: Path) -> int:
    """`integration` in the foreground and `lane` beside it (start_lane); the lane's output, kept in
    `lane_log`, is printed after; non-zero when either failed."""
    lane_log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with lane_log.open("wb") as log:
        beside = start_lane(log, lane)
        try:
            integration_status = subprocess.call(integration, cwd=ROOT)
            if beside.poll() is None:
                print("waiting for the Java, unit and API tests ...", flush=True)
            lane_status = beside.wait()
        except KeyboardInterrupt:  # Ctrl-C reaches the integration tests, not the lane's own session
            os.killpg(beside.pid, signal.SIGTERM)
            beside.wait()
            raise
    print(f"\n===== Java, unit and API tests (run beside the integration tests; {lane_log}) =====", flush=True)
    sys.stdout.write(lane_log.read_text(errors="replace"))

    def outcome(status: int) -> str:
        return "passed" if status == 0 else f"FAILED (exit status {status})"

    print(f"\nintegration tests: {outcome(integration_status)}; Java, unit and API tests: {outcome(lane_status)}; "
          f"{time.monotonic() - started:.0f} s in all", flush=True)
    return integration_status or lane_status


def main(argv: list[str]) -> int:
    if argv == ["--lane"]:
        return run_lane()
    return run(integration_command(argv), [sys.executable, "-m", "tests.lanes", "--lane"], LANE_LOG)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
