"""Failover and failback of a mirror A -> B: the decisions, without I/O.

- Failover: a group's committed offsets on A, translated through the mirror's offset syncs (MM2's
  rule, `OffsetSyncStore.translate`), are where its consumers start on B.
- Failback: a group's committed offsets on B go back to A. On a remote topic `A.t` they are
  translated through the same offset syncs read backwards (`translate_back`); on a topic `t` that
  producers wrote on B meanwhile, through the reverse mirror's offset syncs to `B.t` on A.
- Both never skip a record: an offset between two syncs resumes right after the older sync, and
  `reprocess` counts the records read again.
- A reverse mirror B -> A cannot tell A's records from B's when remote topics keep their names
  (identity and legacy policies): the failback is refused (`loop_reason`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mirrorcore.checkpoints import OffsetSyncStore
from mirrorcore.filters import TopicSelector
from mirrorcore.formats import OffsetSync
from mirrors.choices import ApplicationState, ConnectorState, DesiredState, ReplicationPolicy

Offsets = dict[tuple[str, int], int]
FORWARD, BACK = "forward", "back"
SUFFIX = "-failback"
NAME_MAX = 63


class Refused(Exception):
    """A verb that may not run now; `errors` names the field or subject and why (nothing was changed)."""

    def __init__(self, errors: dict[str, list[str]], status: int = 409) -> None:
        super().__init__("; ".join(f"{key}: {' '.join(reasons)}" for key, reasons in errors.items()))
        self.errors = errors
        self.status = status


def failover_refusal(name: str, source_desired: str, source_state: str, application: str | None,
                     phase: str | None) -> dict[str, list[str]] | None:
    """Why mirror `name` may not fail over now (None: it may)."""
    if phase == "failed_over":
        return {"mirror": [f"mirror {name!r} has failed over already: fail back (POST .../failback/) or delete it"]}
    if phase == "failed_back" and source_desired == DesiredState.STOPPED:
        return {"mirror": [f"mirror {name!r} has failed back and its source connector is stopped: resume it "
                           "(POST .../connectors/source/resume/) so that it mirrors again, then fail over"]}
    if source_desired == DesiredState.PAUSED or source_state == ConnectorState.PAUSED:
        return {"mirror": [f"mirror {name!r} is paused (source connector): resume it so that it can drain, "
                           "then fail over"]}
    if source_state == ConnectorState.FAILED or application == ApplicationState.FAILED:
        return {"mirror": [f"mirror {name!r} has failed: restart it so that it can drain (or fix the cause), "
                           "then fail over"]}
    return None


def loop_reason(policy: str, source: str, target: str) -> str | None:
    """Why a reverse mirror target -> source would loop records back (None: remote topics are told apart)."""
    if policy in (ReplicationPolicy.IDENTITY, ReplicationPolicy.LEGACY):
        return (f"the {policy} replication policy keeps topic names: a mirror {target} -> {source} could not tell "
                f"the records that came from {source} from those written on {target}, and would copy them back "
                f"(a loop); fail back with a mirror using the default policy")
    return None


def reverse_name(name: str) -> str:
    """The reverse mirror's name: `<name>-failback`, cut to the 63 characters a name may have."""
    return f"{name[:NAME_MAX - len(SUFFIX)].rstrip('-')}{SUFFIX}"


# -- offset syncs ------------------------------------------------------------------------------

@dataclass
class SyncIndex:
    """A flow's offset syncs, readable both ways: upstream -> downstream (MM2) and back."""

    forward: OffsetSyncStore = field(default_factory=OffsetSyncStore)
    _pairs: dict[tuple[str, int], list[tuple[int, int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, syncs: Iterable[OffsetSync]) -> SyncIndex:
        index = cls()
        for sync in syncs:
            index.add(sync)
        return index

    def add(self, sync: OffsetSync) -> None:
        self.forward.add(sync)
        pairs = self._pairs.setdefault((sync.topic, sync.partition), [])
        if pairs and sync.upstream_offset <= pairs[-1][0]:  # recreated or truncated upstream, as the store
            del pairs[bisect.bisect_left(pairs, (sync.upstream_offset, -1)):]
        pairs.append((sync.upstream_offset, sync.downstream_offset))

    def latest_upstream(self, topic: str, partition: int) -> int | None:
        pairs = self._pairs.get((topic, partition))
        return pairs[-1][0] if pairs else None

    def translate_back(self, topic: str, partition: int, downstream: int) -> tuple[int, int] | None:
        """(upstream offset, records read again) for a position `downstream` on the remote partition of
        upstream `topic`-`partition`: the latest sync at or below it, exact or right after it."""
        pairs = sorted(self._pairs.get((topic, partition), []), key=lambda pair: pair[1])
        index = bisect.bisect_right([d for _, d in pairs], downstream) - 1
        if index < 0:
            return None
        upstream, synced = pairs[index]
        return (upstream, 0) if synced == downstream else (upstream + 1, max(0, downstream - synced - 1))


# -- translations ---------------------------------------------------------------------------

def forward_rows(committed: Offsets, syncs: SyncIndex, selector: TopicSelector,
                 remote_of: Callable[[str], str]) -> list[dict]:
    """Where a group resumes on the target for each replicated partition it committed on the source."""
    rows = []
    for (topic, partition), offset in sorted(committed.items()):
        if not selector.should_replicate(topic) or selector.policy.is_heartbeats_topic(topic):
            continue
        translation = syncs.forward.translate(topic, partition, offset)
        rows.append(_row(topic, partition, remote_of(topic), offset,
                         None if translation is None else translation.downstream_offset,
                         None if translation is None else translation.reprocess,
                         None if translation else f"no offset sync at or below {offset}: not replicated that far"))
    return rows


def back_rows(committed_on_target: Offsets, forward: SyncIndex, reverse: SyncIndex, forward_selector: TopicSelector,
              reverse_selector: TopicSelector, source: str, target: str) -> list[dict]:
    """Where a group resumes on the source (A) from its committed offsets on the target (B).

    `A.t` on B goes back to `t` on A through the forward syncs read backwards; a topic written on B
    that the reverse mirror copies goes to its remote topic on A through the reverse syncs, and only
    once the reverse mirror has copied the partition up to the group's offset (else the row says so).
    """
    policy = forward_selector.policy
    rows = []
    for (topic, partition), offset in sorted(committed_on_target.items()):
        if policy.is_heartbeats_topic(topic):
            continue
        upstream = policy.upstream_topic(topic)
        if policy.topic_source(topic) == source and upstream and forward_selector.should_replicate(upstream):
            back = forward.translate_back(upstream, partition, offset)
            rows.append(_row(topic, partition, upstream, offset, back and back[0], back and back[1],
                             None if back else f"no offset sync at or below {offset} on {topic}"))
        elif reverse_selector.should_replicate(topic):
            remote = reverse_selector.policy.format_remote_topic(target, topic)
            latest = reverse.latest_upstream(topic, partition)
            translation = reverse.forward.translate(topic, partition, offset)
            if latest is None or latest < offset - 1 or translation is None:
                rows.append(_row(topic, partition, remote, offset, None, None,
                                 f"the reverse mirror has copied {topic}-{partition} up to "
                                 f"{'nothing' if latest is None else latest + 1} of {offset} yet"))
            else:
                rows.append(_row(topic, partition, remote, offset, translation.downstream_offset,
                                 translation.reprocess, None))
    return rows


def _row(topic: str, partition: int, to_topic: str, from_offset: int, offset: int | None, reprocess: int | None,
         note: str | None) -> dict:
    return {"topic": topic, "partition": partition, "to_topic": to_topic, "committed_offset": from_offset,
            "offset": offset, "reprocess": reprocess, "note": note}


def commit_plan(rows: list[dict], current: Offsets, partitions: dict[str, int]) -> Offsets:
    """The offsets to commit: translated, on a partition that exists, and ahead of the group's own."""
    plan = {}
    for row in rows:
        key = (row["to_topic"], row["partition"])
        if row["offset"] is not None and row["partition"] < partitions.get(row["to_topic"], 0) \
                and row["offset"] > current.get(key, -1):
            plan[key] = row["offset"]
    return plan


def complete(rows: list[dict]) -> bool:
    """Every partition translated (a group with nothing to translate is complete too)."""
    return all(row["offset"] is not None for row in rows)
