"""Taking over from MM2: its committed source offsets, read from Kafka Connect's offsets topic, and
where each partition starts from them."""

import dataclasses
import json

from mirrorcore import adoption
from mirrorcore.formats import OffsetSync
from mirrorcore.resume import ADOPTED, EARLIEST, EMPTY, FROM_SYNC, UNPLACED, plan

T0, T1, T2 = ("orders", 0), ("orders", 1), ("orders", 2)


def key(topic: str, partition: int, cluster: str = "east", name: str = "MirrorSourceConnector") -> bytes:
    return json.dumps([name, {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def value(offset: int) -> bytes:
    return json.dumps({"offset": offset}).encode()


def test_the_last_record_of_a_partition_wins_and_a_tombstone_deletes():
    records = [(key("orders", 0), value(10)), (key("orders", 1), value(5)), (key("orders", 0), value(42)),
               (key("orders", 1), None), (key("payments", 3), value(0))]
    assert adoption.committed_offsets(records, "east") == {T0: 42, ("payments", 3): 0}


def test_only_source_connector_partitions_of_the_flow_count():
    records = [
        (key("orders", 0, cluster="north"), value(7)),  # another flow into the same topic
        (json.dumps(["MirrorCheckpointConnector", {"group": "g", "topic": "orders", "partition": 0}]).encode(),
         value(0)),
        (json.dumps(["MirrorHeartbeatConnector", {"sourceClusterAlias": "east", "targetClusterAlias": "west"}])
         .encode(), value(0)),
        (b"not json", value(1)), (None, value(1)), (key("orders", 1), b"\x00garbage"),
        (key("orders", 2), json.dumps({"offset": None}).encode()),
        (json.dumps(["MirrorSourceConnector", {"cluster": "east", "topic": "orders", "partition": "0"}]).encode(),
         value(3)),
    ]
    assert adoption.committed_offsets(records, "east") == {}


def test_any_connector_name_counts_and_the_highest_offset_wins():
    records = [(key("orders", 0, name="east->west.MirrorSourceConnector"), value(100)),
               (key("orders", 0, name="old-name"), value(60))]
    assert adoption.committed_offsets(records, "east") == {T0: 100}


def test_the_start_plan_begins_after_each_committed_offset():
    assert adoption.start_plan({T0: 41, T1: 0}, {T0: 50}) == {"from": "mm2-offsets", "partitions": {
        "orders:0": {"start": 42, "remote_end": 50}, "orders:1": {"start": 1, "remote_end": 0}}}
    assert adoption.parse_plan(adoption.start_plan({("a:b", 3): 9}, {})) == {("a:b", 3): (10, 0)}


def test_duplicates_count_from_the_latest_sync_at_or_before_the_committed_offset():
    syncs = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 100, 100), OffsetSync("orders", 0, 200, 200)]
    # committed 149: downstream 149, the remote partition ends at 230: 150..229 were copied twice
    count, sync = adoption.duplicates(150, 230, syncs)
    assert (count, sync.upstream_offset) == (80, 100)
    assert adoption.duplicates(230, 230, syncs)[0] == 0, "everything copied was committed"
    assert adoption.duplicates(150, 230, [])[0] == 230, "no sync: an upper bound"
    assert adoption.duplicates(1, 0, [])[0] == 0


def test_duplicates_follow_offset_differences_between_source_and_target():
    # the remote partition held 1,000 records before MM2 began
    assert adoption.duplicates(51, 1_060, [OffsetSync("orders", 0, 0, 1_000)])[0] == 9


def test_adopted_partitions_take_precedence_over_the_offset_sync_plan():
    syncs = [OffsetSync("orders", 0, 100, 100), OffsetSync("orders", 0, 180, 180)]
    fallback = plan([T0, T1, T2], adoption_latest(syncs), {T0: 200, T1: 30, T2: 0})
    adopted = adoption.start_plan({T0: 149}, {T0: 200})
    result = adoption.adopt(fallback, adopted, syncs)
    start = result.starts[T0]
    assert (start.offset, start.how, start.duplicates, start.sync.upstream_offset) == (150, ADOPTED, 50, 100)
    assert result.starts[T1].how == UNPLACED and result.starts[T2].how == EMPTY, "the others fall back"
    assert result.starting_offsets([T0, T1, T2]) == '{"orders": {"0": 150, "1": -2, "2": -2}}'
    report = result.report()
    assert report["from"] == "mm2-offsets" and report["partitions"] == 1
    assert report["per_partition"]["orders:0"] | {"sync": None} == {
        "start": 150, "how": "mm2-offsets", "remote_end": 200, "duplicates": 50, "sync": None, "reason": None}


def test_an_adopted_partition_with_an_empty_remote_partition_starts_after_the_commit():
    result = adoption.adopt(plan([T0], {}, {T0: 0}), adoption.start_plan({T0: 9}, {}), [])
    assert (result.starts[T0].offset, result.starts[T0].duplicates) == (10, 0)
    assert result.starting_offsets([T0]) == '{"orders": {"0": 10}}'


def test_a_sync_past_the_adoption_wins_once_the_mirror_has_copied_further():
    syncs = [OffsetSync("orders", 0, 100, 100), OffsetSync("orders", 0, 5_000, 5_000)]
    fallback = plan([T0], adoption_latest(syncs), {T0: 5_100})
    result = adoption.adopt(fallback, adoption.start_plan({T0: 149}, {T0: 200}), syncs)
    assert result is fallback and result.starts[T0].how == FROM_SYNC and result.starts[T0].offset == 5_001


def test_without_an_adopted_plan_the_resume_plan_is_unchanged():
    fallback = plan([T0], {}, {T0: 0})
    assert adoption.adopt(fallback, None, []) is fallback
    assert fallback.starts[T0].offset == EARLIEST and dataclasses.replace(fallback).origin == "offset-syncs"


def adoption_latest(syncs):
    from mirrorcore.resume import latest_syncs

    return latest_syncs(syncs)
