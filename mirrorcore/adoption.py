"""Taking over from a running MirrorMaker 2 where it stopped (pure logic, no I/O).

MM2's source connector commits, through Kafka Connect, the last source offset it copied of each
partition to Connect's offsets topic on the target cluster (`mm2-offsets.<source>.internal` in
dedicated mode, the `offset.storage.topic` of the Connect cluster otherwise):

- key: JSON `["<connector name>", {"cluster": "<source alias>", "topic": "<topic>", "partition": <n>}]`
- value: JSON `{"offset": <last copied source offset>}`; a null value (tombstone) deletes the key.

The last record of a key wins. Connect commits only what the producer acknowledged, so starting
each partition at `offset + 1` loses nothing; what MM2 copied after its last commit is on the
remote partition already and is copied again (duplicates).

The adopted plan is kept as `{"partitions": {"<topic>:<partition>": {"start": n, "remote_end": e}}}`,
`remote_end` being the remote partition's end when the mirror was adopted. It places a partition
whenever the mirror has no checkpoint, unless an offset sync written past `remote_end` (by this
mirror, after adoption) says the copy has gone further since: then the offset-sync plan stands.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from mirrorcore.formats import OffsetSync
from mirrorcore.resume import ADOPTED, FROM_SYNC, Partition, PartitionStart, ResumePlan

log = logging.getLogger(__name__)

ORIGIN = "mm2-offsets"
_SOURCE_PARTITION_KEYS = {"cluster", "topic", "partition"}


def source_partition(key: bytes | str | None, source_alias: str) -> Partition | None:
    """The source partition an offsets-topic key names, if it is a MirrorSourceConnector's (any
    connector name) for `source_alias`; None for anything else (checkpoint and heartbeat
    connectors, other flows, other connectors, undecodable keys)."""
    try:
        decoded = json.loads(key) if key is not None else None
    except (TypeError, ValueError):
        return None
    if not (isinstance(decoded, list) and len(decoded) == 2 and isinstance(decoded[1], dict)):
        return None
    wrapped = decoded[1]
    if set(wrapped) != _SOURCE_PARTITION_KEYS or wrapped["cluster"] != source_alias:
        return None
    topic, partition = wrapped["topic"], wrapped["partition"]
    if not isinstance(topic, str) or not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
        return None
    return topic, partition


def committed_offset(value: bytes | str | None) -> int | None:
    """The offset of an offsets-topic value; None for a tombstone or a value without one."""
    if value is None:
        return None
    try:
        decoded = json.loads(value)
    except (TypeError, ValueError):
        return None
    offset = decoded.get("offset") if isinstance(decoded, dict) else None
    return offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0 else None


def committed_offsets(records: Iterable[tuple[bytes | None, bytes | None]], source_alias: str) -> dict[Partition, int]:
    """MM2's last committed source offset per partition of flow `source_alias` -> here, from the
    offsets topic's (key, value) records in the order of each of its partitions.

    Several connector names may hold the same source partition (a connector renamed, a second
    Connect deployment sharing the topic): the highest committed offset is taken."""
    by_name: dict[tuple[str, Partition], int] = {}
    for key, value in records:
        tp = source_partition(key, source_alias)
        if tp is None or key is None:
            continue
        name = str(json.loads(key)[0])
        offset = committed_offset(value)
        if offset is None:
            by_name.pop((name, tp), None)
        else:
            by_name[(name, tp)] = offset
    committed: dict[Partition, int] = {}
    for (_, tp), offset in by_name.items():
        committed[tp] = max(committed.get(tp, offset), offset)
    return committed


def start_plan(committed: dict[Partition, int], remote_ends: dict[Partition, int]) -> dict[str, Any]:
    """The adopted plan a mirror keeps: each committed partition starts at `offset + 1`."""
    return {"from": ORIGIN, "partitions": {
        f"{topic}:{partition}": {"start": offset + 1, "remote_end": max(0, remote_ends.get((topic, partition), 0))}
        for (topic, partition), offset in sorted(committed.items())}}


def parse_plan(adopted: Mapping[str, Any] | None) -> dict[Partition, tuple[int, int]]:
    """(start, remote end at adoption) per source partition of an adopted plan."""
    starts: dict[Partition, tuple[int, int]] = {}
    for key, spec in ((adopted or {}).get("partitions") or {}).items():
        topic, _, partition = str(key).rpartition(":")
        starts[(topic, int(partition))] = (int(spec["start"]), int(spec.get("remote_end", 0)))
    return starts


def duplicates(start: int, remote_end: int, syncs: Iterable[OffsetSync]) -> tuple[int, OffsetSync | None]:
    """Records on the remote partition past MM2's committed position (`start - 1`), and the sync
    it is counted from: the latest sync at or before that position maps it downstream, records
    after a sync being contiguous on both sides. Without one the whole remote partition counts
    (an upper bound)."""
    committed = start - 1
    usable = [s for s in syncs if 0 <= s.upstream_offset <= committed and 0 <= s.downstream_offset < remote_end]
    if remote_end <= 0:
        return 0, None
    if not usable:
        return remote_end, None
    sync = max(usable, key=lambda s: (s.upstream_offset, s.downstream_offset))
    downstream = min(remote_end - 1, sync.downstream_offset + committed - sync.upstream_offset)
    return max(0, remote_end - 1 - downstream), sync


def adopt(plan: ResumePlan, adopted: Mapping[str, Any] | None, syncs: list[OffsetSync]) -> ResumePlan:
    """`plan` (the offset-sync resume plan) with MM2's committed positions in the partitions they
    place; a partition whose latest sync is past its remote end at adoption keeps the sync's start."""
    starts = parse_plan(adopted)
    if not starts:
        return plan
    by_partition: dict[Partition, list[OffsetSync]] = {}
    for sync in syncs:
        by_partition.setdefault((sync.topic, sync.partition), []).append(sync)
    placed = dict(plan.starts)
    for tp, fallback in plan.starts.items():
        if tp not in starts:
            continue
        start, end_at_adoption = starts[tp]
        newer = fallback.sync is not None and fallback.sync.downstream_offset >= end_at_adoption
        if fallback.how == FROM_SYNC and newer:
            continue  # this mirror has copied, and synced, past the adoption: the sync is newer
        copied_twice, counted_from = duplicates(start, fallback.remote_end, by_partition.get(tp, ()))
        placed[tp] = PartitionStart(tp[0], tp[1], start, ADOPTED, fallback.remote_end, copied_twice, counted_from,
                                    None if counted_from is not None or not copied_twice else
                                    "no offset sync at or before MM2's committed offset: every record on the "
                                    "remote partition counts")
    result = dataclasses.replace(plan, starts=placed, origin=ORIGIN)
    if not result.adopted:
        return plan
    log.info("no checkpoint: %d partitions start after MM2's committed offsets; %d records are copied "
             "again (%s)", len(result.adopted), sum(s.duplicates for s in result.adopted),
             ", ".join(f"{s.key} from {s.offset} +{s.duplicates}" for s in result.adopted[:20]))
    return result

