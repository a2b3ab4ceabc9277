"""What every connector shares: Kafka Connect's states, desired-state handling, failure capture."""

from __future__ import annotations

import logging
import time
import traceback
from abc import ABC, abstractmethod

from mirrorcore.channel import FAILED, PAUSED, RUNNING, STOPPED, UNASSIGNED, ConnectorDesired

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 4000


class Connector(ABC):
    """A connector steered by its desired state; subclasses do the work in `_start`/`_halt`/`_tick`.

    A FAILED connector stays FAILED until the control plane asks for a restart (a new restart
    token): the decision to auto-restart, and when, belongs to the supervisor.
    """

    kind = "connector"

    def __init__(self) -> None:
        self.state = UNASSIGNED
        self.error: str | None = None
        self.restart_token: int | None = None

    # -- driven by the application loop ------------------------------------------------

    def apply(self, desired: ConnectorDesired) -> None:
        if self.restart_token is None:
            self.restart_token = desired.restart
        elif desired.restart != self.restart_token:
            self.restart_token = desired.restart
            log.info("%s connector: restart requested", self.kind)
            self._guarded(self._halt)
            self.state, self.error = UNASSIGNED, None
        if desired.state == "running" and self.state in {UNASSIGNED, PAUSED, STOPPED}:
            started = time.monotonic()
            if self._guarded(self._start):
                self.state, self.error = RUNNING, None
                log.info("%s connector running (started in %.1f s)", self.kind, time.monotonic() - started)
        elif desired.state == "paused" and self.state == RUNNING:
            started = time.monotonic()
            if self._guarded(self._halt):
                self.state = PAUSED
                log.info("%s connector paused (halted in %.1f s)", self.kind, time.monotonic() - started)
        elif desired.state == "paused" and self.state in {UNASSIGNED, STOPPED}:
            self.state = PAUSED
        elif desired.state == "stopped" and self.state != STOPPED:
            started = time.monotonic()
            self._guarded(self._halt)
            self.state, self.error = STOPPED, None
            log.info("%s connector stopped (halted in %.1f s)", self.kind, time.monotonic() - started)

    def tick(self) -> None:
        if self.state == RUNNING:
            self._guarded(self._tick)

    def shutdown(self) -> None:
        if self.state in {RUNNING, PAUSED}:
            self._guarded(self._halt)
        self.state = STOPPED

    def fail(self, error: BaseException | str) -> None:
        if isinstance(error, (RuntimeError, ValueError)) and str(error):
            detail = str(error)  # our own errors say what happened in full sentences
        elif isinstance(error, BaseException):
            detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        else:
            detail = error
        log.error("%s connector failed: %s", self.kind, detail)
        self.state, self.error = FAILED, detail[:MAX_ERROR_CHARS]

    def status(self) -> dict:
        return {"state": self.state, "error": self.error, "tasks": self.tasks(), "restart": self.restart_token}

    def tasks(self) -> list[dict]:
        return [{"id": 0, "state": self.state}] if self.state != UNASSIGNED else []

    # -- subclass hooks ----------------------------------------------------------------

    @abstractmethod
    def _start(self) -> None:
        """Begin work (RUNNING); raise to fail the connector."""

    @abstractmethod
    def _halt(self) -> None:
        """Stop work, keeping what a later `_start` can resume from."""

    def _tick(self) -> None:  # noqa: B027 - optional hook
        """Periodic work while RUNNING; raise to fail the connector."""

    def _guarded(self, action) -> bool:
        try:
            action()
            return True
        except Exception as error:  # noqa: BLE001 - a connector failure must not kill the application
            self._guarded_cleanup()
            self.fail(error)
            return False

    def _guarded_cleanup(self) -> None:  # noqa: B027 - optional hook
        """Release what a failed action left behind (override where needed)."""


class MisconfiguredConnector(Connector):
    """Stands in for a connector whose configuration is invalid: FAILED, with the reason."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__()
        self.kind = kind
        self.reason = reason

    def _start(self) -> None:
        raise ValueError(self.reason)

    def _halt(self) -> None:
        """Nothing runs."""
