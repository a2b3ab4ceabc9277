"""What every candidate is and gets: the run's names (RunSpec), the brokers and folders (Environment),
and the Candidate interface the harness drives."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunSpec:
    label: str  # e.g. "r2-mm2-t4": unique within a benchmark
    alias: str  # the source cluster's alias in this run: the remote topic is new on the target
    topic: str  # source topic
    partitions: int
    tasks: int  # tasks.max (the raw copy: threads)
    compression: str = "none"  # the producer's compression.type towards the target (the source's codec)
    steady: bool = False  # steady traffic (a latency run), not a backlog to copy

    @property
    def remote_topic(self) -> str:
        return f"{self.alias}.{self.topic}"


@dataclass(frozen=True)
class Environment:
    source: str  # bootstrap servers
    target: str
    redis_url: str
    work_dir: Path
    target_log_dir: Path | None = None  # the target broker's partitions, to read the codecs of its batches
    training_topic: str = "cds-training"  # a small topic on the source for recording class archives
    training_records: int = 20_000
    producer: tuple[tuple[str, str], ...] = ()  # over the mirrors' producer defaults (`--producer`)


class Candidate(ABC):
    name: str = ""
    title: str = ""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def setup(self) -> None:
        """Once before the first run: resolve jars, start services."""
        return None  # optional: nothing to do by default

    def prepare(self, spec: RunSpec) -> None:
        """Before the clock starts (e.g. register the run's source alias)."""
        return None  # optional: nothing to do by default

    @abstractmethod
    def start(self, spec: RunSpec) -> None:
        """Begin copying; the clock runs from the call."""

    @abstractmethod
    def process_groups(self) -> list[int]:
        """Process groups doing this run's work (may be empty until they appear)."""

    def control_plane_groups(self) -> list[int]:
        """Process groups serving every run (Mirrorplane's web app and worker); none by default."""
        return []

    def waiting_groups(self) -> list[int]:
        """Process groups of the candidate that wait for a later run (Mirrorplane's standby drivers no
        mirror has claimed); none by default."""
        return []

    def failure(self) -> str | None:
        """Why the run cannot finish (its process exited, an API error), else None."""
        return None

    def settling(self) -> str | None:
        """Why the candidate is not yet in the state it would keep under steady traffic (e.g. still
        copying a start-up backlog in a mode it will leave), else None. The latency warm-up lasts
        until this is None."""
        return None

    def starting(self) -> str | None:
        """Why the candidate's own start is not over yet (e.g. a process it starts beside the mirror
        after it), else None. Unlike `settling`, this always ends: the latency warm-up waits for it
        without a grace period."""
        return None

    def reader_endpoint(self, spec: RunSpec) -> tuple[str, str]:
        """Where the latency reader reads this run's records: bootstrap servers and topic (the remote
        topic on the target)."""
        return self.env.target, spec.remote_topic

    def details(self) -> dict:
        """What the candidate can tell about the run (e.g. Spark micro-batches, `effective_tasks`: the
        tasks that really copied); asked before `stop`."""
        return {}

    @abstractmethod
    def stop(self) -> None:
        """Stop this run's processes and wait until they are gone."""

    def teardown(self) -> None:
        """Once at the end: stop what `setup` started."""
        return None  # optional: nothing to do by default

    def settings(self) -> dict:
        """The settings that matter for the comparison, for the report."""
        return {}
