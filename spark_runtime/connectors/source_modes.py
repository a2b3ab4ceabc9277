"""The source connector's choice between micro-batches and real-time mode, its changes of mind, the
handover of exact positions from a stopped real-time query to the next, and the driver's commits of
a running real-time query's positions.

A mixin of SourceConnector (spark_runtime/connectors/source.py): it reads the connector's topics,
positions and query, and restarts the query in the mode `replication_mode.decide` calls for.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from mirrorcore import local_master, resume
from spark_runtime import checkpoint_store, real_time, replication_mode

if TYPE_CHECKING:
    from spark_runtime.lag import Positions

log = logging.getLogger(__name__)

MODE_CHECK_SECONDS = 5.0  # auto mode weighs the backlog this often
CALLS_TO_SWITCH = 2  # checks in a row that call for the other mode before it is taken
CAPACITY_MEMORY_SECONDS = 600.0  # how long the rate real-time mode fell behind at keeps it away
# After a fall-back, real-time mode is tried again only when records arrived below the rate it fell behind at
# in every check of the last 30 s: over 5 s the arrival rate swings (a source's producers share the cores with
# the micro-batches catching up), and a single slow interval is not a drop in the traffic.
ARRIVING_WINDOW_CHECKS = 6


class ReplicationModes:
    mode_setting: str
    mode: replication_mode.ModeDecision | None
    next_mode_check: float
    mode_switches: int
    mode_since: float | None  # when the running query's mode began (wall clock)
    mode_calls: int = 0  # checks in a row that called for the other mode
    last_rates: replication_mode.Rates | None = None  # at the previous mode check
    real_time_rates: replication_mode.Rates | None = None  # as the running real-time query started
    arriving: float | None = None  # records/s written to the source between the last two checks
    recent_arriving: tuple[float, ...] = ()  # the same, at each of the last ARRIVING_WINDOW_CHECKS checks
    copying: float | None = None  # records/s copied between them
    real_time_capacity: tuple[float, float] | None = None  # (records/s, monotonic time) it fell behind at
    topics: dict[str, int]
    fresh: bool
    resume_plan: Any
    query: Any
    spark: Any
    settings: Any
    config: Any
    cores: int | None
    slots: int | None
    given_cores: int | None
    source_admin: Any
    progress: Any
    gauges: Any
    handover: dict[tuple[str, int], int] | None
    next_position_commit: float = 0.0
    consumer_per_task_slot: bool

    if TYPE_CHECKING:  # SourceConnector's methods that this mixin calls
        def _partitions(self) -> list[tuple[str, int]]: ...
        def _grow_remote_partitions(self) -> None: ...
        def _stop_query(self) -> None: ...
        def _start_query(self, mode: replication_mode.ModeDecision | None = None) -> None: ...
        def positions(self) -> Positions | None: ...
        def task_slots(self) -> int: ...

    def _decide_mode(self, backlog: int | None) -> replication_mode.ModeDecision:
        limit = self.settings.get_int("replication.mode.auto.backlog.records")
        capacity = self.real_time_capacity
        if capacity is not None and time.monotonic() - capacity[1] > CAPACITY_MEMORY_SECONDS:
            capacity = self.real_time_capacity = None  # long enough: real-time mode gets another try
        return replication_mode.decide(self.mode_setting, self._real_time_tasks(), self.slots or 1, backlog, limit,
                                       self.mode.mode if self.mode is not None and self.query is not None else None,
                                       local=self._tasks_local(),
                                       arriving=max(self.recent_arriving) if self.recent_arriving else None,
                                       capacity=capacity[0] if capacity is not None else None)

    def _in_real_time(self) -> bool:
        """The running query's mode is real-time."""
        return self.mode is not None and self.mode.mode == replication_mode.REAL_TIME

    def _real_time_tasks(self) -> int:
        """The long-running tasks a real-time query holds: one per task slot reading its share of the
        partitions, or one per partition with Spark's Kafka source."""
        partitions = sum(self.topics.values())
        return min(partitions, self.task_slots()) if self.consumer_per_task_slot else partitions

    def _count_slots(self) -> None:
        """Task slots (every task thread: real-time mode holds one per task) and cores (tasks
        copying at once: the operator's N when the control plane widened a local[N] master)."""
        context = self.spark.sparkContext
        self.slots = context.defaultParallelism
        if self.given_cores is None:  # read once: getConf() copies Spark's whole configuration
            self.given_cores = int(context.getConf().get(local_master.CORES_CONF) or 0)
        self.cores = min(self.given_cores, self.slots) if self.given_cores else self.slots

    def _start_positions(self) -> dict[tuple[str, int], int]:
        """Where the query about to start reads next, per partition, as far as known: what it
        copied in this application's life, else its resume plan, else its checkpoint."""
        known = self.progress.next_offsets()
        if self.fresh and self.resume_plan is not None:
            known = self.resume_plan.next_offsets() | known
        if known:
            return known
        return checkpoint_store.committed_offsets(self.spark, self.config.checkpoint_dir("source"))

    def _backlog(self, positions: dict[tuple[str, int], int]) -> int | None:
        """Records waiting on the source after `positions` (None: no partition's position is known).
        Without a checkpoint, a partition with no position starts at its beginning."""
        unknown = [tp for tp in self._partitions() if tp not in positions]
        if unknown and self.fresh:
            positions = positions | self.source_admin.end_offsets(unknown, earliest=True)
        known = [tp for tp in self._partitions() if tp in positions]
        if not known:
            return None
        ends = self.source_admin.end_offsets(known)
        self._measure_rates(sum(ends.values()))
        return sum(max(0, ends.get(tp, 0) - positions[tp]) for tp in known)

    def _measure_rates(self, written: int) -> None:
        """Records arriving and copied per second since the previous look at the source's ends."""
        rates = replication_mode.Rates(time.monotonic(), written, int(self.progress.metrics["records"]))
        measured = rates.since(self.last_rates) if self.last_rates is not None else None
        self.last_rates = rates
        if not self._in_real_time():
            self.real_time_rates = None
        elif self.real_time_rates is None:
            self.real_time_rates = rates
        self.arriving, self.copying = measured if measured is not None else (None, None)
        if self.arriving is not None:
            self.recent_arriving = (*self.recent_arriving, self.arriving)[-ARRIVING_WINDOW_CHECKS:]

    def _reconsider_mode(self) -> None:
        """Auto mode: restart the query in the other mode when the backlog calls for it (the
        checkpoint is shared, so the new query goes on exactly where the old one stopped); real-time
        mode: take in partitions added on the source."""
        self.next_mode_check = time.monotonic() + MODE_CHECK_SECONDS
        self._count_slots()  # executors may join or leave
        if self._in_real_time():
            # No batch function runs to grow the remote partitions first: a partition added on the
            # source is grown here, and the query restarts so that it gets a task (and a slot).
            partitions = sum(self.topics.values())
            self._grow_remote_partitions()
            if sum(self.topics.values()) != partitions:
                log.info("source partitions added: restarting the real-time query")
                self._stop_query()
                self._start_query()
                return
        if self.mode_setting != replication_mode.AUTO or self.mode is None:
            return
        positions = self.positions()
        decision = self._decide_mode(self._backlog(positions.next_offsets) if positions else None)
        # A change is made when two checks in a row call for it: the tail of a backfill, still
        # being copied, is not taken for steady traffic.
        self.mode_calls = self.mode_calls + 1 if decision.mode != self.mode.mode else 0
        if self.mode_calls >= CALLS_TO_SWITCH:
            self.mode_calls = 0
            log.info("switching from %s to %s: %s", self.mode.mode, decision.mode, decision.reason)
            capacity = self._real_time_capacity()
            if capacity is not None:
                self.real_time_capacity = (capacity, time.monotonic())
                log.info("real-time mode fell behind copying %.0f records/s (%s arriving): micro-batches while "
                         "more than %.0f records/s arrive, for the next %.0f s", capacity,
                         "?" if self.arriving is None else f"{self.arriving:.0f}",
                         capacity * replication_mode.CAPACITY_SHARE, CAPACITY_MEMORY_SECONDS)
            self.mode_switches += 1
            self._stop_query()
            self._start_query(decision)

    def _take_mode(self, mode: replication_mode.ModeDecision) -> None:
        """The query about to start runs in `mode`: since when (on a change of mode), its first check, and
        for real-time mode where its run is measured from."""
        if self.mode is None or mode.mode != self.mode.mode:
            self.mode_since = round(time.time(), 3)
        self.mode = mode
        self.next_mode_check = time.monotonic() + MODE_CHECK_SECONDS
        if mode.mode == replication_mode.REAL_TIME:
            self._real_time_started()

    def _real_time_started(self) -> None:
        """A real-time query's run is measured from the look at the source that started it (taken just
        before), else from its first check. Its first check may come late: the driver's loop serves the
        connectors one after the other, and a checkpoint connector starting beside it once held the loop for
        21 s while real-time mode fell 900,000 records behind; measured from the check after that, its last
        5 s of catching up looked like keeping up, and no rate was remembered."""
        recent = self.last_rates is not None and time.monotonic() - self.last_rates.at <= MODE_CHECK_SECONDS
        self.real_time_rates = self.last_rates if recent else None

    def _real_time_capacity(self) -> float | None:
        """The rate a real-time query copied at, if it fell behind: over its whole run (from its start,
        see _real_time_started) when fewer records were copied than arrived over it, else over the last interval
        when it fell behind in that one; None while it kept up. Its copying comes in bursts: a query
        whose backlog grew by a million records may still have copied more than arrived in its last
        5 s, and judged by those alone it would be tried again at once. A query that copied nothing
        while records arrived (one falling back within its first checks, before a copied record was
        counted) fell behind at 0 records/s and is not tried again while records arrive; such a run
        used to leave no rate behind, and auto mode went back to real-time mode two checks later."""
        if not self._in_real_time():
            return None
        if self.last_rates is not None and self.real_time_rates is not None:
            run = self.last_rates.since(self.real_time_rates)
            if run is not None and run[0] > run[1]:
                return run[1]
        if self.arriving is not None and self.copying is not None and self.arriving > self.copying:
            return self.copying
        return None

    def _settle_handover(self) -> None:
        """Once the query started from a handover has planned its first batch, its checkpoint
        carries the positions on: the handover file goes."""
        checkpoint = self.config.checkpoint_dir("source")
        if self.handover is not None and checkpoint_store.has_offsets(self.spark, checkpoint):
            checkpoint_store.delete_handover(self.spark, checkpoint)
            self.handover = None

    def _commit_positions(self) -> None:
        """A real-time query in this JVM: every `offset.flush.interval.ms`, sync and flush its tasks'
        latest positions (MM2's commit), then record them beside the checkpoint, where a restart
        after a crash goes on from (see checkpoint_store's positions). A task's failed send fails
        the connector here, as MM2's task fails on its producer's error."""
        self.next_position_commit = time.monotonic() + self.settings.get_int("offset.flush.interval.ms") / 1000
        started = time.monotonic()
        self.progress.absorb_real_time(real_time.commit(self.spark))
        positions = self.progress.next_offsets()
        if positions:
            checkpoint_store.write_positions(self.spark, self.config.checkpoint_dir("source"), positions)
            self.gauges.committed((time.monotonic() - started) * 1000)
        failure = real_time.failure(self.spark)
        if failure:  # a quiet partition's task would report it only at its epoch's end
            raise RuntimeError(failure)

    def _committed_positions(self, checkpoint: str, usable: bool,
                             handover: dict[tuple[str, int], int] | None) -> tuple[dict | None, dict | None]:
        """At start: (a handover, the positions) from the positions a real-time query committed
        before the application ended. Over a handover (a stopped query's, which a later query went
        on from) or a usable checkpoint, a handover of each partition's further position, when they
        are further anywhere; with neither, the positions, for the resume plan to start from."""
        positions = checkpoint_store.read_positions(self.spark, checkpoint)
        if positions:
            positions = resume.within(positions, self.source_admin.end_offsets(list(positions)))
        if not positions:
            return handover, None
        if handover is None and not usable:
            return None, positions
        since = "the handover it started from" if handover is not None else "its checkpoint's latest epoch"
        merged = resume.further(handover if handover is not None else
                                checkpoint_store.committed_offsets(self.spark, checkpoint), positions)
        if merged is not None:
            log.info("the real-time query committed positions after %s: %d partitions go on from them", since,
                     sum(1 for tp, offset in positions.items() if merged.get(tp) == offset))
            checkpoint_store.write_handover(self.spark, checkpoint, merged)
            return merged, None
        return handover, None

    def _tasks_local(self) -> bool:
        return str(self.spark.sparkContext.master).startswith("local")

    def _hand_over(self) -> None:
        """The stopped real-time query's exact positions, for the next query (see checkpoint_store):
        every record its tasks had acknowledged, known here because they ran in this JVM."""
        self.progress.absorb_real_time(real_time.progress(self.spark))
        checkpoint = self.config.checkpoint_dir("source")
        positions = checkpoint_store.committed_offsets(self.spark, checkpoint)
        if self.handover:
            positions = self.handover | positions
        for tp, offset in self.progress.next_offsets().items():
            positions[tp] = max(positions.get(tp, offset), offset)
        if positions:
            checkpoint_store.write_handover(self.spark, checkpoint, positions)
            self.handover = positions
        checkpoint_store.delete_positions(self.spark, checkpoint)  # the handover holds them, or further ones
