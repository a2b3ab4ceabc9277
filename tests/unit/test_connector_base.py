"""The connector state machine shared by every connector, driven through a tiny fake subclass."""

import pytest

from mirrorcore.channel import FAILED, PAUSED, RUNNING, STOPPED, UNASSIGNED, ConnectorDesired
from spark_runtime.connectors.base import MAX_ERROR_CHARS, Connector


class FakeConnector(Connector):
    kind = "fake"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.fail_start: BaseException | None = None
        self.fail_halt: BaseException | None = None
        self.fail_tick: BaseException | None = None

    def _start(self) -> None:
        self.calls.append("start")
        if self.fail_start:
            raise self.fail_start

    def _halt(self) -> None:
        self.calls.append("halt")
        if self.fail_halt:
            raise self.fail_halt

    def _tick(self) -> None:
        self.calls.append("tick")
        if self.fail_tick:
            raise self.fail_tick

    def _guarded_cleanup(self) -> None:
        self.calls.append("cleanup")


def running(restart: int = 0) -> ConnectorDesired:
    return ConnectorDesired("running", restart)


def paused(restart: int = 0) -> ConnectorDesired:
    return ConnectorDesired("paused", restart)


def stopped(restart: int = 0) -> ConnectorDesired:
    return ConnectorDesired("stopped", restart)


def test_new_connector_is_unassigned_with_no_tasks():
    connector = FakeConnector()
    assert connector.state == UNASSIGNED
    assert connector.status() == {"state": UNASSIGNED, "error": None, "tasks": [], "restart": None}


def test_running_starts_once():
    connector = FakeConnector()
    connector.apply(running())
    connector.apply(running())
    assert connector.state == RUNNING
    assert connector.calls == ["start"]
    assert connector.status() == {"state": RUNNING, "error": None, "tasks": [{"id": 0, "state": RUNNING}],
                                  "restart": 0}


def test_running_paused_running():
    connector = FakeConnector()
    connector.apply(running())
    connector.apply(paused())
    assert connector.state == PAUSED
    connector.apply(paused())
    assert connector.state == PAUSED
    connector.apply(running())
    assert connector.state == RUNNING
    assert connector.calls == ["start", "halt", "start"]


def test_paused_from_the_start_does_not_start():
    connector = FakeConnector()
    connector.apply(paused())
    assert connector.state == PAUSED
    assert connector.calls == []


def test_stopped_halts_once_and_can_run_again():
    connector = FakeConnector()
    connector.apply(running())
    connector.apply(stopped())
    connector.apply(stopped())
    assert connector.state == STOPPED
    assert connector.calls == ["start", "halt"]
    connector.apply(running())
    assert connector.state == RUNNING
    assert connector.calls == ["start", "halt", "start"]


def test_stopped_to_paused():
    connector = FakeConnector()
    connector.apply(stopped())
    assert connector.state == STOPPED
    connector.apply(paused())
    assert connector.state == PAUSED
    assert "start" not in connector.calls


def test_start_that_raises_fails_the_connector_with_the_error_text():
    connector = FakeConnector()
    connector.fail_start = RuntimeError("broker unreachable")
    connector.apply(running())
    assert connector.state == FAILED
    assert connector.error == "broker unreachable"
    assert connector.calls == ["start", "cleanup"]
    status = connector.status()
    assert status["state"] == FAILED
    assert status["error"] == "broker unreachable"
    assert status["tasks"] == [{"id": 0, "state": FAILED}]


def test_long_errors_are_truncated():
    connector = FakeConnector()
    connector.fail_start = ValueError("x" * (2 * MAX_ERROR_CHARS))
    connector.apply(running())
    assert connector.state == FAILED
    assert connector.error is not None
    assert connector.error.startswith("xxx")
    assert len(connector.error) == MAX_ERROR_CHARS


def test_fail_with_a_string():
    connector = FakeConnector()
    connector.fail("lost the writer")
    assert (connector.state, connector.error) == (FAILED, "lost the writer")


@pytest.mark.parametrize("state", ["running", "paused"])
def test_failed_stays_failed_while_the_restart_token_is_unchanged(state):
    connector = FakeConnector()
    connector.fail_start = RuntimeError("boom")
    connector.apply(running())
    connector.fail_start = None
    connector.calls.clear()
    for _ in range(3):
        connector.apply(ConnectorDesired(state, 0))
        connector.tick()
    assert connector.state == FAILED
    assert connector.error == "boom"
    assert connector.calls == []


def test_restart_token_change_restarts_a_failed_connector():
    connector = FakeConnector()
    connector.fail_start = RuntimeError("boom")
    connector.apply(running(restart=0))
    assert connector.state == FAILED
    connector.fail_start = None
    connector.apply(running(restart=1))
    assert connector.state == RUNNING
    assert connector.error is None
    assert connector.restart_token == 1
    assert connector.calls == ["start", "cleanup", "halt", "start"]


def test_restart_that_fails_again_reports_the_new_error():
    connector = FakeConnector()
    connector.fail_start = RuntimeError("first")
    connector.apply(running(restart=0))
    connector.fail_start = RuntimeError("second")
    connector.apply(running(restart=1))
    assert (connector.state, connector.error) == (FAILED, "second")


def test_restart_token_change_restarts_a_running_connector():
    connector = FakeConnector()
    connector.apply(running(restart=4))
    connector.apply(running(restart=5))
    assert connector.state == RUNNING
    assert connector.calls == ["start", "halt", "start"]
    connector.apply(running(restart=5))
    assert connector.calls == ["start", "halt", "start"]


def test_restart_of_a_paused_connector_leaves_it_paused():
    connector = FakeConnector()
    connector.apply(running(restart=0))
    connector.apply(paused(restart=0))
    connector.apply(paused(restart=1))
    assert connector.state == PAUSED
    assert connector.calls.count("start") == 1


def test_first_observed_restart_token_does_not_trigger_a_restart():
    connector = FakeConnector()
    connector.apply(running(restart=7))
    assert connector.restart_token == 7
    assert connector.state == RUNNING
    assert connector.calls == ["start"]


def test_tick_only_while_running():
    connector = FakeConnector()
    connector.tick()
    connector.apply(running())
    connector.tick()
    connector.tick()
    connector.apply(paused())
    connector.tick()
    assert connector.calls == ["start", "tick", "tick", "halt"]


def test_tick_that_raises_fails_the_connector():
    connector = FakeConnector()
    connector.apply(running())
    connector.fail_tick = OSError("disk full")
    connector.tick()
    assert connector.state == FAILED
    assert connector.error == "OSError: disk full"
    connector.tick()
    assert connector.calls == ["start", "tick", "cleanup"]


def test_halt_that_raises_while_pausing_fails_the_connector():
    connector = FakeConnector()
    connector.apply(running())
    connector.fail_halt = RuntimeError("stuck")
    connector.apply(paused())
    assert (connector.state, connector.error) == (FAILED, "stuck")


def test_shutdown_halts_a_running_connector():
    connector = FakeConnector()
    connector.apply(running())
    connector.shutdown()
    assert connector.state == STOPPED
    assert connector.calls == ["start", "halt"]


def test_shutdown_of_a_failed_connector_does_not_halt():
    connector = FakeConnector()
    connector.fail_start = RuntimeError("boom")
    connector.apply(running())
    connector.shutdown()
    assert connector.state == STOPPED
    assert "halt" not in connector.calls


def test_connector_is_abstract():
    with pytest.raises(TypeError):
        Connector()  # type: ignore[abstract]


def test_errors_of_other_types_keep_their_type_name():
    connector = FakeConnector()
    connector.fail(KeyError("missing"))
    assert connector.error == "KeyError: 'missing'"


def test_misconfigured_connector_fails_with_its_reason():
    from spark_runtime.connectors.base import MisconfiguredConnector

    connector = MisconfiguredConnector("source", "offset-syncs.topic.location must be 'source' or 'target'")
    connector.apply(running())
    assert connector.state == FAILED
    assert connector.error == "offset-syncs.topic.location must be 'source' or 'target'"
