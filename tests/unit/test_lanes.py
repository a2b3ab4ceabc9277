"""`make test`'s two lanes: the second runs beside the first in a lowered session, and either one's
failure fails the whole."""

from __future__ import annotations

import os
import sys

import pytest

from controlplane.infra import priority
from tests import lanes

OK = [sys.executable, "-c", "pass"]


def exiting(status: int) -> list[str]:
    return [sys.executable, "-c", f"import sys; print('lane says hello'); sys.exit({status})"]


@pytest.mark.parametrize(("integration", "lane", "expected"), [(0, 0, 0), (0, 3, 3), (2, 0, 2), (2, 3, 2)])
def test_the_status_is_the_first_failure_of_either_lane(tmp_path, capsys, integration, lane, expected):
    assert lanes.run(exiting(integration), exiting(lane), tmp_path / "lane.log") == expected
    out = capsys.readouterr().out
    assert "lane says hello" in out, "the lane's output is printed after the integration tests'"
    assert ("Java, unit and API tests: passed" in out) is (lane == 0)


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


def test_every_test_runs_in_exactly_one_lane():
    [_, tests] = lanes.lane_commands()
    integration = lanes.integration_command(["-x"])
    for path in lanes.LANE_INTEGRATION_TESTS:
        assert path in tests and f"--ignore={path}" in integration
        assert (lanes.ROOT / path).is_file()
    assert integration[-1] == "-x", "arguments go to the integration lane's pytest"
