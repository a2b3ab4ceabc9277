"""`make test`'s two lanes: the second runs beside the first in a lowered session, and either one's
failure fails the whole."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from controlplane.infra import priority
from mirrorcore.waiting import wait_until
from tests import lanes

OK = [sys.executable, "-c", "pass"]


def exiting(status: int) -> list[str]:
    return [sys.executable, "-c", f"import sys; print('lane says hello'); sys.exit({status})"]


@pytest.mark.parametrize(("integration", "lane", "expected"), [(0, 0, 0), (0, 3, 3), (2, 0, 2), (2, 3, 2)])
def test_the_status_is_the_first_failure_of_either_lane(tmp_path, capfdbinary, integration, lane, expected):
    assert lanes.run(exiting(integration), exiting(lane), tmp_path / "lane.log") == expected
    out = capfdbinary.readouterr().out.decode()
    assert "lane says hello" in out, "the lane's output is printed after the integration tests'"
    assert ("Java, unit and API tests: passed" in out) is (lane == 0)
    assert "least free disk space" in out.splitlines()[-1]


PYTEST_LIKE = [sys.executable, "-c", "import sys; print('tests/integration/test_a.py ', end='', flush=True); "
               "print('.F'); print('FAILED tests/integration/test_a.py::test_b - assert 1 == 2'); "
               "print('\\x1b[31m==== 1 failed, 1 passed in 2.50s ====\\x1b[0m'); sys.exit(1)"]


def test_the_integration_tests_failures_are_repeated_after_the_lane(tmp_path, capfdbinary):
    assert lanes.run(PYTEST_LIKE, exiting(0), tmp_path / "lane.log") == 1
    out = capfdbinary.readouterr().out.decode()
    tail = out[out.index("lane says hello"):]
    assert "FAILED tests/integration/test_a.py::test_b - assert 1 == 2" in tail
    assert "==== 1 failed, 1 passed in 2.50s ====" in tail, "without colour codes"
    assert out.startswith("tests/integration/test_a.py .F"), "the output passes through as it comes"


@pytest.mark.parametrize(("line", "kept"), [
    ("FAILED tests/x.py::test_y - AssertionError", True),
    ("ERROR tests/x.py::test_z - OperationalError: disk I/O error", True),
    ("======= 109 passed in 2549.33s (0:42:29) =======", True),
    ("===== 1071 passed, 883 errors in 445.05s (0:07:25) =====", True),
    ("========================= short test summary info ==========================", False),
    ("tests/integration/test_acls.py ....", False),
    ("    assert result.failed == 0", False),
])
def test_summary_lines(line, kept):
    assert lanes.is_summary_line(line) is kept


def test_a_nearly_full_disk_stops_the_suite_before_it_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(lanes, "MIN_FREE_BYTES", 2**62)
    assert lanes.run(exiting(0), exiting(0), tmp_path / "lane.log") == 1
    assert "GB free on the file system of" in capsys.readouterr().err
    assert not (tmp_path / "lane.log").exists(), "neither lane started"


def test_the_disk_watch_keeps_the_least_free_space(tmp_path, monkeypatch):
    readings = iter([900, 500, 700] + [800] * 100)
    monkeypatch.setattr(lanes.shutil, "disk_usage", lambda path: type("Usage", (), {"free": next(readings)}))
    with lanes.DiskWatch(tmp_path, interval=0.01) as watch:
        wait_until(lambda: watch.least <= 500, 10, interval=0.01)
    assert watch.least == 500


def test_the_disk_watch_starts_from_a_reading_it_is_given(tmp_path, monkeypatch):
    monkeypatch.setattr(lanes.shutil, "disk_usage", lambda path: type("Usage", (), {"free": 800}))
    with lanes.DiskWatch(tmp_path, interval=60, free=600) as watch:
        assert watch.least == 600
    assert watch.least == 600, "the closing reading (800) is not less"


def test_the_lane_runs_lowered_in_a_session_and_a_test_folder_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", "--junitxml=/dev/null")
    report = [sys.executable, "-c",
              "import os; from controlplane.infra import priority; "
              "print(os.getsid(0), priority.session_niceness(), os.getpriority(os.PRIO_PROCESS, 0), "
              "os.environ['MIRRORPLANE_TEST_VAR_DIR'], 'PYTEST_ADDOPTS' in os.environ)"]
    assert lanes.run(OK, report, tmp_path / "lane.log") == 0
    session, session_nice, thread_nice, var_dir, addopts = (tmp_path / "lane.log").read_text().split()
    assert int(session) != os.getsid(0)
    own_session = priority.session_niceness()
    assert session_nice == ("None" if own_session is None else str(min(19, own_session + lanes.LANE_NICENESS)))
    assert int(thread_nice) == min(19, priority.own_niceness() + lanes.LANE_NICENESS)
    assert var_dir == str(lanes.LANE_VAR_DIR) and addopts == "False"


def collected(arguments: list[str]) -> list[str]:
    """The node ids pytest selects for `arguments`."""
    listing = subprocess.run([sys.executable, "-m", "pytest", lanes.TEST_SETTINGS, "--collect-only", "-q",
                              "-p", "no:cacheprovider", *arguments], cwd=lanes.ROOT, capture_output=True,
                             text=True, check=True).stdout
    return [line for line in listing.splitlines() if "::" in line]


def test_every_test_runs_in_exactly_one_lane():
    [_, tests] = lanes.lane_commands()
    integration = lanes.integration_command(["-x"])
    for node in lanes.LANE_INTEGRATION_TESTS:
        assert node in tests and f"--deselect={node}" in integration
        assert (lanes.ROOT / node.partition("::")[0]).is_file()
    lane_ids = collected(lanes.LANE_INTEGRATION_TESTS)
    integration_ids = collected(integration[integration.index("tests/integration"):-1])
    assert any("[yarn]" in node for node in lane_ids) and not any("yarn" in node for node in integration_ids)
    assert not set(lane_ids) & set(integration_ids)
    assert integration[-1] == "-x", "arguments go to the integration lane's pytest"


def test_both_lanes_run_on_the_test_settings_whatever_the_environment_says():
    """Importing `controlplane` sets DJANGO_SETTINGS_MODULE to the product's settings; the lanes name the
    test settings, which give each lane its own database and folders."""
    [_, tests] = lanes.lane_commands()
    assert lanes.TEST_SETTINGS in tests and lanes.TEST_SETTINGS in lanes.integration_command([])
    header = subprocess.run(
        [sys.executable, "-m", "pytest", lanes.TEST_SETTINGS, "tests/unit/test_lanes.py", "--collect-only",
         "-k", "no_test_has_this_name", "-p", "no:cacheprovider"],
        env=os.environ | {"DJANGO_SETTINGS_MODULE": "controlplane.settings"}, cwd=lanes.ROOT,
        capture_output=True, text=True, check=False).stdout
    assert "settings: tests.settings (from option)" in header, header
