"""Consumer-offset translation through offset syncs, with MM2's rules (pure logic, no I/O).

- `OffsetSyncStore` keeps the syncs read from `mm2-offset-syncs.<target>.internal`.
- `translate` maps a committed upstream offset to a downstream one: the latest sync at or below
  it gives `d` when exact, else `d + 1`, never further (no record may be skipped; records in
  between are read again, which `reprocess` counts). No sync at or below: no translation.
- `CheckpointLedger` remembers the checkpoints emitted and refuses one that would move a group
  backwards, unless the group itself was rewound on the source (MM2 emits after a rewind).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from mirrorcore.formats import Checkpoint, OffsetSync

MAX_SYNCS_PER_PARTITION = 10_000


@dataclass(frozen=True)
class Translation:
    upstream_offset: int  # the group's committed offset on the source
    downstream_offset: int  # where the group resumes on the target
    sync_upstream_offset: int  # the sync it was derived from

    @property
    def reprocess(self) -> int:
        """Most records a consumer resuming at `downstream_offset` reads again (0 when exact)."""
        return max(0, self.upstream_offset - self.sync_upstream_offset - 1)


class OffsetSyncStore:
    """Syncs per source topic-partition, sorted by upstream offset.

    A sync at or below an earlier one means the partition was recreated or truncated upstream:
    the later history no longer applies and is dropped, as MM2 does.
    """

    def __init__(self, max_per_partition: int = MAX_SYNCS_PER_PARTITION) -> None:
        self.max_per_partition = max_per_partition
        self._upstream: dict[tuple[str, int], list[int]] = {}
        self._downstream: dict[tuple[str, int], list[int]] = {}

    def add(self, sync: OffsetSync) -> None:
        key = (sync.topic, sync.partition)
        ups = self._upstream.setdefault(key, [])
        downs = self._downstream.setdefault(key, [])
        if ups and sync.upstream_offset <= ups[-1]:
            cut = bisect.bisect_left(ups, sync.upstream_offset)
            del ups[cut:], downs[cut:]
        ups.append(sync.upstream_offset)
        downs.append(sync.downstream_offset)
        if len(ups) > self.max_per_partition:
            del ups[0], downs[0]

    def translate(self, topic: str, partition: int, committed: int) -> Translation | None:
        ups = self._upstream.get((topic, partition))
        if not ups:
            return None
        index = bisect.bisect_right(ups, committed) - 1
        if index < 0:
            return None
        upstream, downstream = ups[index], self._downstream[(topic, partition)][index]
        return Translation(committed, downstream if upstream == committed else downstream + 1, upstream)

    def partitions(self) -> int:
        return len(self._upstream)

    def __len__(self) -> int:
        return sum(len(ups) for ups in self._upstream.values())


class CheckpointLedger:
    """The last checkpoint emitted per (group, remote topic, partition)."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str, int], Checkpoint] = {}

    def remember(self, checkpoint: Checkpoint) -> None:
        self.last[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint

    def get(self, group: str, topic: str, partition: int) -> Checkpoint | None:
        return self.last.get((group, topic, partition))

    def is_news(self, checkpoint: Checkpoint) -> bool:
        """Emit only what moves the group forward downstream, or follows a rewind upstream."""
        previous = self.get(checkpoint.group, checkpoint.topic, checkpoint.partition)
        if previous is None:
            return True
        if checkpoint.upstream_offset < previous.upstream_offset:
            return True
        return checkpoint.downstream_offset > previous.downstream_offset
