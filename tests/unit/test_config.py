"""MirrorConfig as the control plane writes it, and per-connector settings."""

import json

import pytest

from mirrorcore.config import CONNECTOR_KINDS, ConnectorSettings, MirrorConfig
from mirrorcore.filters import DEFAULT_GROUPS, DEFAULT_GROUPS_EXCLUDE, DEFAULT_TOPICS, DEFAULT_TOPICS_EXCLUDE


def minimal(**extra) -> dict:
    return {
        "name": "east-to-west",
        "source": {"alias": "east", "bootstrap_servers": "e:9092"},
        "target": {"alias": "west", "bootstrap_servers": "w:9092"},
        "work_dir": "/tmp/mirror",
        "redis_url": "redis://localhost:6379/0",
        **extra,
    }


def test_from_dict_with_minimal_data_uses_defaults():
    config = MirrorConfig.from_dict(minimal())
    assert config.name == "east-to-west"
    assert config.generation == 1
    assert config.source.alias == "east"
    assert config.target.bootstrap_servers == "w:9092"
    assert (config.topics, config.topics_exclude) == (DEFAULT_TOPICS, DEFAULT_TOPICS_EXCLUDE)
    assert (config.groups, config.groups_exclude) == (DEFAULT_GROUPS, DEFAULT_GROUPS_EXCLUDE)
    assert config.replication_policy == "default"
    assert config.separator == "."


def test_from_dict_fills_every_missing_connector_kind():
    config = MirrorConfig.from_dict(minimal())
    assert set(config.connectors) == set(CONNECTOR_KINDS) == {"source", "checkpoint", "heartbeat"}
    assert all(settings == ConnectorSettings() for settings in config.connectors.values())


def test_from_dict_keeps_given_connectors_and_fills_the_rest():
    config = MirrorConfig.from_dict(minimal(connectors={
        "source": {"tasks_max": "4", "config": {"offset.lag.max": 50, "sync.topic.configs.enabled": False}},
        "heartbeat": {"config": None},
        "bogus": {"tasks_max": 9},
    }))
    assert set(config.connectors) == set(CONNECTOR_KINDS)
    assert config.connectors["source"].tasks_max == 4
    assert config.connectors["source"].config == {"offset.lag.max": "50", "sync.topic.configs.enabled": "False"}
    assert config.connectors["heartbeat"] == ConnectorSettings()
    assert config.connectors["checkpoint"] == ConnectorSettings()


def test_from_dict_with_null_connectors():
    assert set(MirrorConfig.from_dict(minimal(connectors=None)).connectors) == set(CONNECTOR_KINDS)


def test_from_dict_reads_everything_given():
    config = MirrorConfig.from_dict(minimal(
        generation="3", topics="orders", topics_exclude="", groups="g.*", groups_exclude="",
        replication_policy="identity", separator="_",
    ))
    assert config.generation == 3
    assert (config.topics, config.topics_exclude, config.groups, config.groups_exclude) == ("orders", "", "g.*", "")
    assert config.policy.kind == "identity"
    assert config.policy.separator == "_"


def test_policy_reads_the_internal_separator_setting_from_the_source_connector():
    config = MirrorConfig.from_dict(minimal(separator="_"))
    assert config.policy.checkpoints_topic("east") == "east_checkpoints_internal"
    disabled = MirrorConfig.from_dict(minimal(separator="_", connectors={
        "source": {"config": {"replication.policy.internal.topic.separator.enabled": "false"}},
    }))
    assert disabled.policy.internal_separator_enabled is False
    assert disabled.policy.checkpoints_topic("east") == "east.checkpoints.internal"
    assert disabled.policy.format_remote_topic("east", "t") == "east_t"


def test_topic_selector_targets_the_target_cluster():
    selector = MirrorConfig.from_dict(minimal(topics="orders")).topic_selector
    assert selector.target_alias == "west"
    assert selector.should_replicate("orders")
    assert selector.should_replicate("heartbeats")
    assert not selector.should_replicate("audit")
    assert not selector.should_replicate("west.orders")


def test_checkpoint_dir_is_under_the_work_dir_without_a_checkpoint_location():
    config = MirrorConfig.from_dict(minimal())
    assert config.checkpoint_location == "/tmp/mirror/checkpoints"
    assert config.checkpoint_dir("source") == "/tmp/mirror/checkpoints/source"


@pytest.mark.parametrize(("location", "expected"), [
    ("hdfs://namenode:8020/mirrorplane/checkpoints/east-to-west", "hdfs://namenode:8020/mirrorplane/checkpoints/east-to-west/source"),
    ("s3a://bucket/checkpoints/east-to-west/", "s3a://bucket/checkpoints/east-to-west/source"),
    ("file:///var/lib/mirrorplane/checkpoints/east-to-west", "file:///var/lib/mirrorplane/checkpoints/east-to-west/source"),
    ("/shared/checkpoints/east-to-west", "/shared/checkpoints/east-to-west/source"),
])
def test_checkpoint_dir_is_under_the_checkpoint_location(location, expected):
    config = MirrorConfig.from_dict(minimal(checkpoint_location=location))
    assert config.checkpoint_location == location
    assert config.checkpoint_dir("source") == expected


def test_load_reads_a_json_file(tmp_path):
    path = tmp_path / "mirror.json"
    path.write_text(json.dumps(minimal(generation=7)))
    config = MirrorConfig.load(path)
    assert config.generation == 7
    assert MirrorConfig.load(str(path)) == config


# -- ConnectorSettings ---------------------------------------------------------------------


def test_get_and_get_int_and_get_float():
    settings = ConnectorSettings(config={"offset.lag.max": "50", "interval": "1.5", "name": "x"})
    assert settings.get("name", "d") == "x"
    assert settings.get("missing", "d") == "d"
    assert settings.get_int("offset.lag.max", 100) == 50
    assert settings.get_int("missing", 100) == 100
    assert settings.get_float("interval", 1.0) == 1.5
    assert settings.get_float("missing", 2.0) == 2.0


def test_get_int_rejects_non_integers():
    with pytest.raises(ValueError, match="invalid literal"):
        ConnectorSettings(config={"n": "ten"}).get_int("n", 1)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("TRUE", True), (" True ", True), ("1", True), ("yes", True),
     ("false", False), ("0", False), ("no", False), ("", False), ("maybe", False)],
)
def test_get_bool(raw, expected):
    assert ConnectorSettings(config={"flag": raw}).get_bool("flag", not expected) is expected


@pytest.mark.parametrize("default", [True, False])
def test_get_bool_default(default):
    assert ConnectorSettings().get_bool("flag", default) is default


def test_prefixed_strips_the_prefix_and_keeps_only_matching_keys():
    settings = ConnectorSettings(config={
        "producer.override.acks": "all",
        "producer.override.linger.ms": "5",
        "producer.acks": "1",
        "consumer.max.poll.records": "10",
        "offset.lag.max": "100",
    })
    assert settings.prefixed("producer.override.") == {"acks": "all", "linger.ms": "5"}
    assert settings.prefixed("consumer.") == {"max.poll.records": "10"}
    assert settings.prefixed("admin.") == {}
