"""The checkpoint connector's passes with fake clusters: what it emits, commits and reports."""

from __future__ import annotations

from mirrorcore.config import MirrorConfig
from mirrorcore.formats import Checkpoint, OffsetSync
from mirrorcore.groups import GroupActivity
from spark_runtime.connectors.checkpoint import CheckpointConnector


class FakeGroups:
    def __init__(self, committed: dict[str, dict], activity: GroupActivity | None = None) -> None:
        self.offsets = committed
        self.state = activity or GroupActivity("EMPTY", 0)
        self.commits: list[tuple[str, dict]] = []

    def names(self) -> list[str]:
        return sorted(self.offsets)

    def committed(self, group: str) -> dict:
        return dict(self.offsets.get(group, {}))

    def activity(self, group: str) -> GroupActivity:
        return self.state

    def commit(self, group: str, offsets: dict) -> None:
        self.commits.append((group, offsets))
        self.offsets.setdefault(group, {}).update(offsets)


class FakeAdmin:
    def partition_counts(self, topics: list[str]) -> dict[str, int]:
        return dict.fromkeys(topics, 2)


class FakeProducer:
    def __init__(self) -> None:
        self.sent: list[Checkpoint] = []

    def produce(self, topic, key, value, on_delivery) -> None:
        self.sent.append(Checkpoint.decode(key, value))

    def flush(self, timeout) -> int:
        return 0


def connector(source: FakeGroups, target: FakeGroups, groups_exclude: str = "__.*") -> CheckpointConnector:
    config = MirrorConfig.from_dict({
        "name": "m", "source": {"alias": "east", "bootstrap_servers": "e:9092"},
        "target": {"alias": "west", "bootstrap_servers": "w:9092"}, "work_dir": "/tmp/m", "redis_url": "redis://",
        "topics": "orders", "groups_exclude": groups_exclude,
        "connectors": {"checkpoint": {"config": {"sync.group.offsets.enabled": "true"}}},
    })
    subject = CheckpointConnector(config, source_admin=None, target_admin=None)
    subject.source_groups, subject.target_groups, subject.target_admin = source, target, FakeAdmin()
    subject.producer = FakeProducer()
    for upstream in (0, 101, 202):
        subject.syncs.add(OffsetSync("orders", 0, upstream, upstream + 7))
    return subject


def test_checkpoints_for_replicated_topics_of_selected_groups():
    source = FakeGroups({"billing": {("orders", 0): 150, ("other", 0): 9}, "__internal": {("orders", 0): 5}})
    subject = connector(source, FakeGroups({}))
    subject._refresh_groups()
    subject._emit_checkpoints()
    assert subject.producer.sent == [Checkpoint("billing", "east.orders", 0, 150, 109)]
    [entry] = subject.status()["groups"][0]["partitions"]
    assert entry | {"checkpoint_at": None} == {
        "topic": "orders", "partition": 0, "remote_topic": "east.orders", "committed_offset": 150,
        "translated_offset": 109, "reprocess": 48, "checkpoint_at": None, "target_offset": None, "note": None}
    subject._emit_checkpoints()
    assert len(subject.producer.sent) == 1, "an unchanged position is not emitted again"


def test_untranslatable_offset_is_reported_not_emitted():
    source = FakeGroups({"late": {("orders", 1): 40}})
    subject = connector(source, FakeGroups({}))
    subject._refresh_groups()
    subject._emit_checkpoints()
    assert subject.producer.sent == []
    assert "no offset sync at or below offset 40" in subject.status()["groups"][0]["partitions"][0]["note"]


def test_group_offsets_synced_when_idle_and_never_behind_the_target():
    source = FakeGroups({"billing": {("orders", 0): 150}})
    target = FakeGroups({"billing": {("east.orders", 0): 200}})
    subject = connector(source, target)
    subject._refresh_groups()
    subject._emit_checkpoints()
    subject._sync_group("billing")
    assert target.commits == [("billing", {})], "the target group is already further: left alone"
    assert subject.group_status["billing"]["sync"] == "synced"
    target.offsets["billing"][("east.orders", 0)] = 100
    subject._sync_group("billing")
    assert target.commits[-1] == ("billing", {("east.orders", 0): 109})


def test_group_active_on_the_target_is_skipped_with_the_reason():
    target = FakeGroups({}, GroupActivity("STABLE", 2))
    subject = connector(FakeGroups({"billing": {("orders", 0): 150}}), target)
    subject._refresh_groups()
    subject._emit_checkpoints()
    subject._sync_group("billing")
    status = subject.status()["groups"][0]
    assert target.commits == []
    assert status["sync"] == "skipped" and "active on 'west' (2 members, STABLE)" in status["sync_note"]
