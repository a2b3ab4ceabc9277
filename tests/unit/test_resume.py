"""Where a mirror without a checkpoint starts each partition: after its latest offset sync."""

import json

from mirrorcore.formats import OffsetSync
from mirrorcore.resume import (
    COMMITTED,
    EARLIEST,
    EMPTY,
    FROM_SYNC,
    UNPLACED,
    further,
    latest_syncs,
    plan,
    with_committed,
    within,
)

T0, T1, T2 = ("orders", 0), ("orders", 1), ("orders", 2)


def sync(tp, upstream, downstream) -> OffsetSync:
    return OffsetSync(tp[0], tp[1], upstream, downstream)


def test_a_partition_resumes_after_its_latest_sync_and_counts_what_may_be_copied_again():
    result = plan([T0], {T0: sync(T0, 19_899, 19_899)}, {T0: 20_000})
    start = result.starts[T0]
    assert (start.offset, start.how, start.duplicates) == (19_900, FROM_SYNC, 100)  # 19,900..19,999 again
    assert result.next_offsets() == {T0: 19_900}


def test_no_duplicates_when_the_sync_is_the_last_record_copied():
    start = plan([T0], {T0: sync(T0, 499, 499)}, {T0: 500}).starts[T0]
    assert (start.offset, start.duplicates) == (500, 0)


def test_downstream_offsets_need_not_match_upstream_ones():
    # the remote partition had records before (an earlier mirror) or the source was compacted
    start = plan([T0], {T0: sync(T0, 1_000, 7_040)}, {T0: 7_100}).starts[T0]
    assert (start.offset, start.duplicates) == (1_001, 59)


def test_an_empty_remote_partition_starts_at_the_beginning_even_with_a_sync():
    result = plan([T0, T1], {T0: sync(T0, 10, 10)}, {T0: 0})
    assert all(s.how == EMPTY and s.offset == EARLIEST and s.duplicates == 0 for s in result.starts.values())
    assert result.report() is None, "a new mirror has nothing to report"
    assert result.starting_offsets([T0, T1]) == "earliest"


def test_records_on_the_target_without_a_sync_start_at_the_beginning_and_count_as_duplicates():
    result = plan([T0, T1], {T0: sync(T0, 99, 99)}, {T0: 120, T1: 300})
    unplaced = result.starts[T1]
    assert (unplaced.offset, unplaced.how, unplaced.duplicates) == (EARLIEST, UNPLACED, 300)
    assert "no offset sync" in unplaced.reason
    assert [s.key for s in result.unplaced] == ["orders:1"]
    assert result.duplicates == 20 + 300


def test_a_sync_past_the_remote_end_describes_another_remote_topic():
    start = plan([T0], {T0: sync(T0, 5_000, 5_000)}, {T0: 40}).starts[T0]
    assert (start.how, start.offset, start.duplicates) == (UNPLACED, EARLIEST, 40)
    assert "recreated or truncated" in start.reason


def test_a_sync_past_the_source_end_describes_an_earlier_source_topic():
    start = plan([T0], {T0: sync(T0, 5_000, 10)}, {T0: 40}, source_ends={T0: 30}).starts[T0]
    assert (start.how, start.offset) == (UNPLACED, EARLIEST)
    assert "source topic was recreated" in start.reason
    caught_up = plan([T0], {T0: sync(T0, 29, 39)}, {T0: 40}, source_ends={T0: 30}).starts[T0]
    assert (caught_up.how, caught_up.offset, caught_up.duplicates) == (FROM_SYNC, 30, 0)


def test_starting_offsets_list_every_partition_of_every_topic_for_spark():
    result = plan([T0, T1, T2, ("heartbeats", 0)], {T0: sync(T0, 9, 9), T2: sync(T2, 41, 50)},
                  {T0: 12, T1: 0, T2: 51, ("heartbeats", 0): 0})
    offsets = json.loads(result.starting_offsets([T0, T1, T2, ("heartbeats", 0), ("new", 0)]))
    assert offsets == {"orders": {"0": 10, "1": -2, "2": 42}, "heartbeats": {"0": -2}, "new": {"0": -2}}


def test_the_report_names_each_partition_with_records_on_the_target():
    result = plan([T0, T1, T2], {T0: sync(T0, 9, 9), T1: sync(T1, 0, 0)}, {T0: 12, T1: 0, T2: 7})
    report = result.report()
    assert report["from"] == "offset-syncs"
    assert (report["partitions"], report["unplaced"], report["duplicates"]) == (1, 1, 2 + 7)
    assert report["per_partition"]["orders:0"] == {"start": 10, "how": FROM_SYNC, "remote_end": 12, "duplicates": 2,
                                                   "sync": {"upstream": 9, "downstream": 9}, "reason": None}
    assert report["per_partition"]["orders:2"]["start"] == "earliest"
    assert "orders:1" not in report["per_partition"], "an empty remote partition is not a resume"
    json.dumps(report)  # published as JSON


def test_the_latest_sync_of_a_partition_is_the_last_one_in_the_topic():
    syncs = [sync(T0, 0, 0), sync(T1, 0, 0), sync(T0, 100, 100), sync(T0, 200, 200), sync(T1, 7, 7)]
    assert latest_syncs(syncs) == {T0: sync(T0, 200, 200), T1: sync(T1, 7, 7)}
    # a rewind (the source partition was recreated) is the latest word too
    assert latest_syncs([sync(T0, 500, 500), sync(T0, 0, 600)])[T0] == sync(T0, 0, 600)


def test_committed_real_time_positions_place_a_partition_further_than_its_sync():
    planned = plan([T0, T1, T2], {T0: sync(T0, 99, 99), T1: sync(T1, 50, 50)}, {T0: 200, T1: 60, T2: 0})
    result = with_committed(planned, {T0: 180, T1: 40, T2: 7})
    assert (result.starts[T0].offset, result.starts[T0].how, result.starts[T0].duplicates) == (180, COMMITTED, 20)
    assert result.starts[T1].how == FROM_SYNC, "a position behind the sync changes nothing"
    assert result.starts[T2].how == EMPTY, "what was committed is no longer on an empty remote partition"
    assert result.report()["partitions"] == 2


def test_a_restart_goes_on_from_each_partitions_further_position():
    assert further({T0: 100, T1: 50}, {T0: 90, T1: 50}) is None, "the checkpoint alone is right"
    assert further({T0: 100, T1: 50}, {T0: 130, T2: 5}) == {T0: 130, T1: 50, T2: 5}


def test_positions_past_the_source_end_belong_to_an_earlier_topic():
    assert within({T0: 40, T1: 900, T2: 3}, {T0: 40, T1: 30}) == {T0: 40}
