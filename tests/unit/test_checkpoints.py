"""Offset translation and checkpoint emission rules (MM2's, see mirrorcore/checkpoints.py)."""

from __future__ import annotations

from mirrorcore.checkpoints import CheckpointLedger, OffsetSyncStore
from mirrorcore.formats import Checkpoint, OffsetSync


def store(*pairs: tuple[int, int], topic: str = "t", partition: int = 0) -> OffsetSyncStore:
    syncs = OffsetSyncStore()
    for upstream, downstream in pairs:
        syncs.add(OffsetSync(topic, partition, upstream, downstream))
    return syncs


def test_exact_sync_translates_exactly():
    translation = store((0, 0), (101, 105)).translate("t", 0, 101)
    assert (translation.downstream_offset, translation.reprocess) == (105, 0)


def test_between_syncs_resumes_just_after_the_sync_never_further():
    translation = store((0, 0), (101, 105), (202, 210)).translate("t", 0, 150)
    assert translation.downstream_offset == 106, "the record after the sync: nothing skipped"
    assert translation.reprocess == 48, "upstream 102..149 are read again"


def test_no_sync_at_or_below_the_committed_offset_means_no_translation():
    assert store((500, 0)).translate("t", 0, 499) is None
    assert store((0, 0)).translate("t", 1, 10) is None
    assert store((0, 0)).translate("other", 0, 10) is None


def test_offset_past_the_last_sync_translates_to_just_after_it():
    translation = store((0, 0), (100, 100)).translate("t", 0, 5_000)
    assert translation.downstream_offset == 101 and translation.reprocess == 4_899


def test_a_sync_below_the_last_one_drops_the_later_history():
    syncs = store((0, 0), (100, 100), (200, 200))
    syncs.add(OffsetSync("t", 0, 50, 300))  # the source partition was truncated or recreated
    assert syncs.translate("t", 0, 150).downstream_offset == 301
    assert len(syncs) == 2


def test_history_is_bounded_per_partition():
    syncs = OffsetSyncStore(max_per_partition=3)
    for upstream in range(0, 500, 100):
        syncs.add(OffsetSync("t", 0, upstream, upstream))
    assert len(syncs) == 3
    assert syncs.translate("t", 0, 150) is None, "the oldest syncs were dropped"
    assert syncs.translate("t", 0, 450).downstream_offset == 401


def checkpoint(upstream: int, downstream: int) -> Checkpoint:
    return Checkpoint("g", "east.t", 0, upstream, downstream)


def test_ledger_emits_only_progress_or_a_rewind():
    ledger = CheckpointLedger()
    assert ledger.is_news(checkpoint(10, 10))
    ledger.remember(checkpoint(10, 10))
    assert not ledger.is_news(checkpoint(10, 10)), "same position: nothing new"
    assert not ledger.is_news(checkpoint(12, 10)), "same downstream offset: nothing new"
    assert not ledger.is_news(checkpoint(12, 8)), "never backwards downstream while the group moves forward"
    assert ledger.is_news(checkpoint(11, 11))
    assert ledger.is_news(checkpoint(5, 5)), "the group was rewound on the source: follow it"
