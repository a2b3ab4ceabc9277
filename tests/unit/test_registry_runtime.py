"""The Spark application and the library read their defaults from the registry: connectors built from an
empty configuration see each property's registry default."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mirrorcore import registry
from mirrorcore.config import MirrorConfig
from mirrorcore.filters import DEFAULT_CONFIG_PROPERTIES_EXCLUDE, DEFAULT_GROUPS_EXCLUDE, DEFAULT_TOPICS_EXCLUDE
from mirrorcore.policy import heartbeats_off
from spark_runtime import real_time, replication_mode
from spark_runtime.connectors.checkpoint import CheckpointConnector
from spark_runtime.connectors.heartbeat import HeartbeatConnector
from spark_runtime.connectors.source import SourceConnector


def mirror_config(connectors: dict | None = None) -> MirrorConfig:
    return MirrorConfig.from_dict({
        "name": "m", "work_dir": "/tmp/m", "redis_url": "redis://x",
        "source": {"alias": "east", "bootstrap_servers": "e:1"},
        "target": {"alias": "west", "bootstrap_servers": "w:1"},
        "connectors": connectors or {},
    })


def default(name: str) -> str:
    value = registry.get(name).effective_default
    assert value is not None
    return value


def test_a_source_connector_without_properties_sees_the_registry_defaults():
    source = SourceConnector(spark=None, config=mirror_config(), source_admin=None, target_admin=None)
    syncs, topics = source.offset_syncs, source.remote_topics
    assert syncs.enabled is True and syncs.location == default("offset-syncs.topic.location") == "source"
    assert syncs.max_offset_lag == int(default("offset.lag.max")) == 100
    assert syncs.replication_factor == int(default("offset-syncs.topic.replication.factor")) == -1
    assert syncs.flush_interval == int(default("offset.flush.interval.ms")) / 1000 == 10.0
    assert topics.creation_enabled is True and topics.config_sync_enabled is True and topics.acl_sync_enabled is True
    assert topics.replication_factor == int(default("replication.factor")) == -1
    assert topics.acl_sync_interval == float(default("sync.topic.acls.interval.seconds")) == 600.0
    assert topics.config_sync_interval == float(default("sync.topic.configs.interval.seconds")) == 600.0
    assert not topics.copied.matches("min.insync.replicas") and topics.copied.matches("retention.ms")
    assert source.settings.get_int("batch.max.records") == registry.DEFAULT_BATCH_MAX_RECORDS == 1_000_000
    assert source.settings.get_float("refresh.topics.interval.seconds") == 600.0
    assert replication_mode.parse_setting(source.settings.get("replication.mode")) == replication_mode.AUTO


def test_set_properties_win_over_the_defaults():
    source = SourceConnector(spark=None, config=mirror_config({"source": {"config": {
        "offset.lag.max": "7", "offset.flush.interval.ms": "2500", "sync.topic.acls.interval.seconds": "30"}}}),
        source_admin=None, target_admin=None)
    assert (source.offset_syncs.max_offset_lag, source.offset_syncs.flush_interval) == (7, 2.5)
    assert source.remote_topics.acl_sync_interval == 30.0


def test_the_real_time_epoch_keeps_kafka_connects_flush_interval_unless_set():
    assert real_time.DEFAULT_EPOCH_MS == registry.get_int({}, "offset.flush.interval.ms", mm2_default=True) == 60_000
    assert registry.get("offset.flush.interval.ms").default == "60000"


@pytest.mark.parametrize(("backlog", "mode"), [(50_000, replication_mode.REAL_TIME),
                                               (50_001, replication_mode.MICRO_BATCH)])
def test_auto_mode_weighs_the_backlog_against_the_registry_default(backlog, mode):
    source = SourceConnector(spark=None, config=mirror_config(), source_admin=None, target_admin=None)
    source.spark = SimpleNamespace(sparkContext=SimpleNamespace(master="local[2]"))
    source.topics, source.cores = {"orders": 1}, 2
    assert registry.get_int({}, "replication.mode.auto.backlog.records") == 50_000
    assert source._decide_mode(backlog).mode == mode


def test_a_checkpoint_connector_without_properties_sees_the_registry_defaults():
    checkpoint = CheckpointConnector(mirror_config(), source_admin=None, target_admin=None)
    assert checkpoint.emit_interval == float(default("emit.checkpoints.interval.seconds")) == 60.0
    assert checkpoint.sync_enabled is False
    assert checkpoint.sync_interval == float(default("sync.group.offsets.interval.seconds")) == 60.0
    assert checkpoint.refresh_interval == float(default("refresh.groups.interval.seconds")) == 600.0
    assert checkpoint.off_reason is None
    assert checkpoint.settings.get_int("checkpoints.topic.replication.factor") == -1


def test_a_heartbeat_connector_without_properties_sees_the_registry_defaults():
    heartbeat = HeartbeatConnector(mirror_config(), source_admin=None, target_admin=None)
    assert heartbeat.off_reason is None
    assert heartbeat.settings.get_float("emit.heartbeats.interval.seconds") == 1.0
    assert heartbeat.settings.get_int("heartbeats.topic.replication.factor") == -1
    assert heartbeats_off("default", {"emit.heartbeats.enabled": "false"})


def test_the_mirror_configuration_and_filters_take_the_registry_defaults():
    config = mirror_config()
    assert config.topics_exclude == DEFAULT_TOPICS_EXCLUDE == registry.get_str({}, "topics.exclude")
    assert config.groups_exclude == DEFAULT_GROUPS_EXCLUDE == registry.get_str({}, "groups.exclude")
    assert registry.get_str({}, "config.properties.exclude") == DEFAULT_CONFIG_PROPERTIES_EXCLUDE
    assert config.policy.internal_separator_enabled is True


def test_real_time_mode_needs_a_slot_per_partition_only_with_a_consumer_per_partition():
    config = mirror_config({"source": {"config": {"replication.mode": "real-time"}}})
    source = SourceConnector(spark=None, config=config, source_admin=None, target_admin=None)
    source.spark = SimpleNamespace(sparkContext=SimpleNamespace(master="local[2]"))
    source.mode_setting = replication_mode.parse_setting(source.settings.get("replication.mode"))
    source.topics, source.cores, source.slots = {"orders": 20}, 2, 2
    assert source.consumer_per_task_slot, "per-task-slot is the default"
    assert source._decide_mode(None).mode == replication_mode.REAL_TIME  # two tasks, ten partitions each
    source.consumer_per_task_slot = False
    with pytest.raises(replication_mode.ModeError, match="20 partitions, 2 task slots"):
        source._decide_mode(None)
