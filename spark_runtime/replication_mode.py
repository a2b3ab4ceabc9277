"""How the source connector runs its query: micro-batches or Spark's real-time mode.

Real-time mode (Spark 4.1+) keeps long-running tasks that send each record as it arrives: the lowest
latency, at the price of their task slots for as long as the query runs. With a consumer per task
slot (`replication.real.time.consumers`, the default) there is a task per slot, each reading its
share of the partitions; with Spark's Kafka source, a task per partition, so that more partitions
than task slots leave micro-batches the only choice. Micro-batches plan, read and write ranges of
offsets: the better choice for a large backlog.

`replication.mode` on the source connector: `auto` (the default) chooses by the rules in
`decide`; `micro-batch` and `real-time` force one.
"""

from __future__ import annotations

from dataclasses import dataclass

AUTO, MICRO_BATCH, REAL_TIME = "auto", "micro-batch", "real-time"
SETTINGS = (AUTO, MICRO_BATCH, REAL_TIME)
# A running real-time query falls back to micro-batches only when its backlog is this many times the
# limit, so that a burst it absorbs does not flip the mode back and forth.
FALL_BACK_FACTOR = 4
# After real-time mode fell behind, micro-batches go back to it only while records arrive at no more
# than this share of the rate it copied at then: above it, real-time mode would fall behind again, and
# each change of mode holds the records back for a moment.
CAPACITY_SHARE = 0.8


@dataclass(frozen=True)
class Rates:
    """What the source connector sees at one mode check: records written to the source (the sum of its
    partitions' end offsets) and records copied, since some start, at monotonic time `at`."""
    at: float
    written: int
    copied: int

    def since(self, earlier: Rates) -> tuple[float, float] | None:
        """(records arriving per second, records copied per second) between `earlier` and this; None
        when no time passed or the source's ends went back (partitions deleted and recreated)."""
        elapsed = self.at - earlier.at
        if elapsed <= 0 or self.written < earlier.written:
            return None
        return (self.written - earlier.written) / elapsed, max(0, self.copied - earlier.copied) / elapsed


@dataclass(frozen=True)
class ModeDecision:
    mode: str
    reason: str


class ModeError(ValueError):
    """A forced mode this application cannot run (shown as the connector's failure)."""


def parse_setting(value: str | None) -> str:
    setting = (value or AUTO).strip().lower()
    if setting not in SETTINGS:
        raise ModeError(f"replication.mode must be one of {', '.join(SETTINGS)}, not {value!r}")
    return setting


def decide(setting: str, partitions: int, slots: int, backlog: int | None, limit: int,
           current: str | None = None, local: bool = True, arriving: float | None = None,
           capacity: float | None = None) -> ModeDecision:
    """The mode for a query whose real-time tasks would be `partitions` (a task per source partition
    with Spark's Kafka source; with a consumer per task slot, at most the slots) with `slots` task slots.

    `backlog`: records waiting on the source (None: unknown); `current`: the mode of the running
    query, if any, so that auto mode keeps it unless the backlog says otherwise; `local`: the
    tasks run in the driver's JVM (local[N]), where the driver sees every position as it moves.
    On a cluster it would only learn them once per epoch, so auto mode stays with micro-batches
    there. `arriving`: records written to the source per second lately (the source connector gives the
    highest rate of its last checks); `capacity`: the rate real-time
    mode copied at when it last fell behind (None: it has not, or long enough ago to try again).
    Raises ModeError when `real-time` is forced without a slot per partition.
    """
    if setting == MICRO_BATCH:
        return ModeDecision(MICRO_BATCH, "replication.mode is micro-batch")
    too_few = partitions > slots
    if setting == REAL_TIME:
        if too_few:
            raise ModeError(f"replication.mode is real-time, which needs a task slot per source partition: "
                            f"{partitions} partitions, {slots} task slots (raise MIRRORPLANE_LOCAL_TASK_THREADS or "
                            f"N in local[N], or the executors' cores, or set replication.mode to auto or "
                            f"micro-batch)")
        return ModeDecision(REAL_TIME, "replication.mode is real-time")
    if too_few:
        return ModeDecision(MICRO_BATCH, f"{partitions} partitions, more than the {slots} task slots real-time "
                                         f"mode needs one each of")
    if not local:
        return ModeDecision(MICRO_BATCH, "tasks on executors: real-time positions would only be known per epoch "
                                         "(set replication.mode to real-time to run it anyway)")
    if backlog is None:
        return ModeDecision(current or MICRO_BATCH, "backlog not known yet")
    if current == REAL_TIME and backlog <= limit * FALL_BACK_FACTOR:
        return ModeDecision(REAL_TIME, f"backlog {backlog:,} records, within {limit * FALL_BACK_FACTOR:,}")
    if backlog > limit:
        return ModeDecision(MICRO_BATCH, f"backlog {backlog:,} records, above {limit:,}: copied in micro-batches")
    # A running real-time query was judged by its backlog above; this is the way back to it.
    if capacity is not None and arriving is not None and arriving > capacity * CAPACITY_SHARE:
        return ModeDecision(MICRO_BATCH, f"{arriving:,.0f} records/s arriving; real-time mode fell behind copying "
                                         f"{capacity:,.0f}/s: micro-batches until they arrive at "
                                         f"{capacity * CAPACITY_SHARE:,.0f}/s or less")
    return ModeDecision(REAL_TIME, f"backlog {backlog:,} records, within {limit:,}: each record sent as it arrives")
