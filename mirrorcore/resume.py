"""Where a source connector without a Spark checkpoint starts each partition (pure logic, no I/O).

A mirror whose checkpoint is gone (lost, a new control plane, a restored backup) while its
remote topics already hold replicated records must not copy everything again. MM2's own record
of what it copied is the offset-sync topic: a sync `(u, d)` says source offset `u` of a partition
was written at offset `d` of its remote partition. Given the latest sync of a partition and the
remote partition's end offset `E`:

- `E == 0` (nothing on the target): start at the partition's beginning, nothing is copied twice.
- a sync with `d < E`: start at `u + 1`. Records `u + 1 ...` may already be on the target at
  `d + 1 ... E - 1` (written after the sync, before the checkpoint was lost), so up to
  `E - 1 - d` records are copied again: duplicates, never a gap. MM2 emits a sync at least
  every `offset.lag.max` records (and our connector also when a partition went quiet), so that
  is at most `offset.lag.max` plus one micro-batch.
- records on the target but no usable sync (the sync topic was lost, offset syncs were off,
  the sync names a downstream offset the remote partition does not reach: it was recreated, or
  an upstream offset past the source's end: the source was recreated): the position of the
  copy cannot be known. Starting at the end could lose records, so the partition starts at its
  beginning, as MM2 does without a committed position, and every record on the target counts
  as a possible duplicate; the plan says why, and the connector logs it as a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from mirrorcore.formats import OffsetSync

Partition = tuple[str, int]

EARLIEST = -2  # Spark's Kafka source: -2 in startingOffsets is the partition's earliest offset

FROM_SYNC = "offset-sync"
ADOPTED = "mm2-offsets"  # placed by a running MM2's committed source offsets (mirrorcore/adoption.py)
EMPTY = "empty"
UNPLACED = "unplaced"
COMMITTED = "committed"  # placed by a real-time query's committed positions (every record before them acknowledged)


@dataclass(frozen=True)
class PartitionStart:
    topic: str
    partition: int
    offset: int  # the next source offset to read; EARLIEST: the partition's beginning
    how: str  # FROM_SYNC, ADOPTED, COMMITTED, EMPTY or UNPLACED
    remote_end: int  # end offset of the remote partition when the plan was made
    duplicates: int  # records on the target that may be copied again (an upper bound)
    sync: OffsetSync | None = None  # the sync the start derives from
    reason: str | None = None  # why an UNPLACED partition could not be placed

    @property
    def key(self) -> str:
        return f"{self.topic}:{self.partition}"

    def describe(self) -> dict[str, Any]:
        return {
            "start": self.offset if self.offset >= 0 else "earliest",
            "how": self.how,
            "remote_end": self.remote_end,
            "duplicates": self.duplicates,
            "sync": None if self.sync is None else {"upstream": self.sync.upstream_offset,
                                                    "downstream": self.sync.downstream_offset},
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ResumePlan:
    starts: dict[Partition, PartitionStart]
    origin: str = "offset-syncs"  # what placed the partitions, for the report

    @property
    def resumed(self) -> list[PartitionStart]:
        """Partitions placed by an offset sync."""
        return [s for s in self.starts.values() if s.how == FROM_SYNC]

    @property
    def adopted(self) -> list[PartitionStart]:
        """Partitions placed by MM2's committed source offsets."""
        return [s for s in self.starts.values() if s.how == ADOPTED]

    @property
    def committed(self) -> list[PartitionStart]:
        """Partitions placed by a real-time query's committed positions."""
        return [s for s in self.starts.values() if s.how == COMMITTED]

    @property
    def unplaced(self) -> list[PartitionStart]:
        """Partitions with records on the target that start at their beginning for want of a sync."""
        return [s for s in self.starts.values() if s.how == UNPLACED]

    @property
    def duplicates(self) -> int:
        return sum(s.duplicates for s in self.starts.values())

    def next_offsets(self) -> dict[Partition, int]:
        """The known next source offset of each partition placed by a sync."""
        return {tp: s.offset for tp, s in self.starts.items() if s.offset >= 0}

    def starting_offsets(self, partitions: Iterable[Partition]) -> str:
        """Spark's Kafka source `startingOffsets`: "earliest" when every partition starts at its
        beginning, else JSON `{topic: {partition: offset}}` listing every partition (Spark refuses
        specific offsets that leave a subscribed partition out); -2 is the beginning."""
        offsets: dict[str, dict[str, int]] = {}
        for topic, partition in sorted(partitions):
            start = self.starts.get((topic, partition))
            offsets.setdefault(topic, {})[str(partition)] = start.offset if start is not None else EARLIEST
        if all(offset == EARLIEST for per_topic in offsets.values() for offset in per_topic.values()):
            return "earliest"
        return json.dumps(offsets, sort_keys=True)

    def report(self) -> dict[str, Any] | None:
        """The status document's `resumed`: None when the target held nothing of these partitions."""
        placed = [s for s in self.starts.values() if s.how != EMPTY]
        if not placed:
            return None
        return {
            "from": self.origin,
            "partitions": len(self.resumed) + len(self.adopted) + len(self.committed),
            "unplaced": len(self.unplaced),
            "duplicates": self.duplicates,
            "per_partition": {s.key: s.describe() for s in sorted(placed, key=lambda s: (s.topic, s.partition))},
        }


def with_committed(plan: ResumePlan, positions: dict[Partition, int]) -> ResumePlan:
    """`plan` with each partition that a real-time query's committed positions place further on
    starting there: every record before such a position is acknowledged on the target, so fewer are
    copied again. A partition whose remote partition is empty (EMPTY) keeps its beginning: what was
    committed is no longer on the target."""
    starts = dict(plan.starts)
    for tp, position in positions.items():
        start = starts.get(tp)
        if start is None or start.how == EMPTY or position <= start.offset:
            continue
        skipped = position - start.offset if start.offset >= 0 else 0
        starts[tp] = replace(start, offset=position, how=COMMITTED, duplicates=max(0, start.duplicates - skipped),
                             reason=None)
    return replace(plan, starts=starts)


def within(positions: dict[Partition, int], source_ends: dict[Partition, int]) -> dict[Partition, int]:
    """The committed positions that can still be right: a position past its partition's end offset
    was committed for an earlier topic of that name (the source topic was recreated)."""
    return {tp: offset for tp, offset in positions.items() if tp in source_ends and offset <= source_ends[tp]}


def further(committed: dict[Partition, int], positions: dict[Partition, int]) -> dict[Partition, int] | None:
    """Where a restart reads next when a checkpoint's latest commit is at `committed` and a
    real-time query committed `positions` since: each partition's further position; None when the
    positions are nowhere further (the checkpoint alone is right)."""
    if all(position <= committed.get(tp, -1) for tp, position in positions.items()):
        return None
    return {tp: max(committed.get(tp, -1), positions.get(tp, -1)) for tp in committed.keys() | positions.keys()}


def latest_syncs(syncs: Iterable[OffsetSync]) -> dict[Partition, OffsetSync]:
    """The latest sync per source partition, in the order the sync topic holds them."""
    latest: dict[Partition, OffsetSync] = {}
    for sync in syncs:
        latest[(sync.topic, sync.partition)] = sync
    return latest


def plan(partitions: Iterable[Partition], syncs: dict[Partition, OffsetSync], remote_ends: dict[Partition, int],
         source_ends: dict[Partition, int] | None = None) -> ResumePlan:
    """Where each source partition starts. `remote_ends` are keyed by the source partition (the
    end offset of its remote partition; missing: none yet, 0); `source_ends`, when given, let a
    sync from an earlier life of the source topic be told apart."""
    starts: dict[Partition, PartitionStart] = {}
    for topic, partition in partitions:
        end = max(0, remote_ends.get((topic, partition), 0))
        sync = syncs.get((topic, partition))
        source_end = (source_ends or {}).get((topic, partition))
        if end == 0:
            starts[(topic, partition)] = PartitionStart(topic, partition, EARLIEST, EMPTY, 0, 0)
            continue
        reason = None
        if sync is None:
            reason = "no offset sync for this partition"
        elif sync.downstream_offset >= end:
            reason = (f"the latest offset sync ({sync.upstream_offset} -> {sync.downstream_offset}) is past the "
                      f"remote partition's end ({end}): the remote topic was recreated or truncated")
        elif sync.upstream_offset < 0 or sync.downstream_offset < 0:
            reason = f"the latest offset sync ({sync.upstream_offset} -> {sync.downstream_offset}) is invalid"
        elif source_end is not None and sync.upstream_offset >= source_end:
            reason = (f"the latest offset sync ({sync.upstream_offset} -> {sync.downstream_offset}) is past the "
                      f"source partition's end ({source_end}): the source topic was recreated")
        if sync is None or reason is not None:
            starts[(topic, partition)] = PartitionStart(topic, partition, EARLIEST, UNPLACED, end, end, sync, reason)
            continue
        duplicates = max(0, end - 1 - sync.downstream_offset)
        starts[(topic, partition)] = PartitionStart(topic, partition, sync.upstream_offset + 1, FROM_SYNC, end,
                                                    duplicates, sync)
    return ResumePlan(starts)


def specific_offsets(partitions: Iterable[Partition], offsets: dict[Partition, int]) -> str:
    """Spark's Kafka source `startingOffsets` JSON for `offsets`, every partition listed (one
    without an offset starts at its beginning)."""
    result: dict[str, dict[str, int]] = {}
    for topic, partition in sorted(partitions):
        result.setdefault(topic, {})[str(partition)] = offsets.get((topic, partition), EARLIEST)
    return json.dumps(result, sort_keys=True)
