"""Whether a streaming query can restart from what its checkpoint folder holds."""

from spark_runtime.checkpoint_store import ABSENT, DAMAGED, USABLE, judge


def test_nothing_planned_is_absent():
    assert judge(False, [], []).state == ABSENT
    assert judge(False, [], []).reason == "no checkpoint"
    assert judge(True, [], []).state == ABSENT  # the query started, no batch planned yet


def test_a_whole_checkpoint_is_usable():
    assert judge(True, [0], []).state == USABLE  # the first batch planned, not yet committed
    assert judge(True, range(0, 8), range(0, 8)).state == USABLE
    assert judge(True, range(0, 8), range(0, 7)).state == USABLE  # batch 7 planned, rerun on restart
    assert judge(True, range(120, 221), range(120, 221)).state == USABLE  # older entries purged


def test_lost_metadata_is_damaged():
    verdict = judge(False, range(0, 8), range(0, 8))
    assert verdict.state == DAMAGED
    assert verdict.reason == "the checkpoint's metadata file is missing"


def test_a_gap_before_the_latest_batch_is_damaged():
    verdict = judge(True, [5, 9], [5, 9])
    assert verdict.state == DAMAGED
    assert "batch 9 is there without batch 8" in verdict.reason


def test_no_recent_commit_is_damaged():
    verdict = judge(True, [8, 9], [3])
    assert verdict.state == DAMAGED
    assert "neither batch 9 nor 8" in verdict.reason
