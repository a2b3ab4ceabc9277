"""What the supervisor needs from whatever runs mirror applications: submit, find, explain, kill.

An engine knows applications by what it can see itself (a host's process table, a YARN
ResourceManager), never by what the control plane remembers: the database records which
application a mirror should have, the engine says which ones exist.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from mirrors.models import Mirror


@dataclass(frozen=True)
class Application:
    """One live submission of a mirror's application."""

    id: str  # the engine's own id: a process group (local) or a YARN application id
    mirror: str
    generation: int | None = None  # None when the engine cannot tell (a local process)
    state: str = "RUNNING"  # in the engine's own words (YARN: ACCEPTED, RUNNING, ...)
    tracking_url: str | None = None
    pid: int | None = None  # the driver's process, when it runs on this host
    # When the engine launched the driver (epoch s), where it tells; `queued`: it waits for resources
    # (YARN: accepted, no ApplicationMaster launched yet), so its silence is not yet the driver's.
    launched_at: float | None = None
    queued: bool = False


@dataclass(frozen=True)
class Outcome:
    """How an application that is no longer alive ended, as its engine tells it."""

    reason: str
    succeeded: bool = False


class EngineError(RuntimeError):
    """The engine refused or could not take a submission; the message is the engine's own reason."""


class EngineUnavailable(EngineError):
    """The engine cannot be asked right now (its ResourceManager does not answer).

    The supervisor then judges no application of that engine: an unanswered question is not
    a dead application, and resubmitting on it would start a second one.
    """


class Engine(ABC):
    name: ClassVar[str]
    stops_at_once: ClassVar[bool] = False  # kill() returns only once the application is gone

    @property
    def configured(self) -> bool:
        """Whether this installation can reach such an engine at all (then every pass asks it)."""
        return True

    def environment(self) -> dict[str, str]:
        """The environment of the engine's client processes (spark-submit, Hadoop's FsShell)."""
        return dict(os.environ)

    def checkpoint_location(self, mirror_name: str) -> str | None:
        """Where the mirror's Spark checkpoints live on this engine; None: in its local work folder."""
        return None

    @abstractmethod
    def live(self, known: Mapping[str, str]) -> dict[str, list[Application]]:
        """Live applications by mirror name. `known` maps mirror names to the application id the
        supervisor recorded, for engines that cannot always see a just-started application."""

    @abstractmethod
    def submit(self, mirror: Mirror) -> Application:
        """Start the mirror's application at its current generation; raises EngineError with the reason."""

    def maintain(self) -> None:  # noqa: B027 - an optional hook: most engines have nothing to keep
        """Housekeeping at the end of each supervision pass (the local engine keeps standby drivers)."""

    @abstractmethod
    def kill(self, application: Application) -> None:
        """Stop the application (gracefully where the engine can), and make sure it is gone."""

    @abstractmethod
    def outcome(self, mirror_name: str, application_id: str) -> Outcome:
        """Why an application that is no longer alive ended."""
