"""The property registry: every property well defined, its validators, lookups and typed accessors."""

from __future__ import annotations

import pytest

from mirrorcore import registry
from mirrorcore.registry.catalog import CATALOG
from mirrorcore.registry.model import CONNECTOR_KINDS, OWNERS

TYPES = {"boolean", "int", "long", "double", "seconds", "string", "list", "class", "choice"}


def test_names_are_unique():
    assert len(registry.PROPERTIES) == len(CATALOG)


@pytest.mark.parametrize("prop", CATALOG, ids=lambda p: p.name)
def test_every_property_is_well_defined(prop):
    assert prop.doc.strip() and prop.doc.endswith("."), "a one-sentence doc"
    assert prop.type in TYPES
    assert prop.owner in OWNERS
    assert prop.origin in {"mm2", "mirrorplane"}
    assert set(prop.applies_to) | set(prop.aligned_on) <= set(CONNECTOR_KINDS)
    for default in (prop.default, prop.mirrorplane_default):
        if default is not None:
            prop.validate(default)  # the default passes its own validator
    if prop.alias_of is not None:
        assert registry.get(prop.alias_of).field == prop.field


@pytest.mark.parametrize("prop", [p for p in CATALOG if p.acted_on and p.owner != "mirror"], ids=lambda p: p.name)
def test_every_property_mirrorplane_acts_on_has_a_default(prop):
    assert prop.effective_default is not None


def test_mirrorplane_departs_from_mm2_defaults_only_where_it_says_so():
    departing = {p.name: (p.default, p.mirrorplane_default) for p in CATALOG if p.mirrorplane_default is not None}
    assert departing == {"replication.factor": ("2", "-1"), "offset-syncs.topic.replication.factor": ("3", "-1"),
                         "checkpoints.topic.replication.factor": ("3", "-1"),
                         "heartbeats.topic.replication.factor": ("3", "-1"),
                         "offset.flush.interval.ms": ("60000", "10000")}


def test_mirrorplanes_own_properties():
    assert {p.name for p in CATALOG if p.own} == {"batch.max.records", "replication.mode",
                                                   "replication.mode.auto.backlog.records",
                                                   "replication.real.time.consumers",
                                                   "link.unhealthy.after.seconds"}


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("refresh.topics.enabled", ["true", "FALSE", " true "], ["yes please", "1", ""]),
    ("refresh.topics.interval.seconds", ["600", "0.5"], ["0", "-1", "soon"]),
    ("offset.lag.max", ["0", "100"], ["-1", "many", "1.5"]),
    ("batch.max.records", ["1"], ["0"]),
    ("replication.factor", ["-1", "1", "3"], ["0", "-2", "two"]),
    ("offset-syncs.topic.location", ["source", "target"], ["middle", "Source"]),
    ("replication.mode", ["auto", "micro-batch", "real-time"], ["fast"]),
    ("replication.real.time.consumers", ["per-task-slot", "per-partition"], ["per-topic"]),
    ("config.properties.exclude", ["retention\\.ms, min\\..*", ""], ["retention("]),
    ("offset.flush.interval.ms", ["0", "60000"], ["-1", "1s"]),
    ("replication.policy.separator", [".", "_", "--"], ["", "a b"]),
    ("topic.filter.class", ["org.apache.kafka.connect.mirror.DefaultTopicFilter"], ["", "not a class", "a..b"]),
    ("replication.policy.class", ["org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
                                  "com.example.LegacyReplicationPolicy"], ["com.example.MyPolicy"]),
])
def test_validators_accept_and_refuse(name, good, bad):
    prop = registry.get(name)
    for value in good:
        prop.validate(value)
    for value in bad:
        with pytest.raises(ValueError):
            prop.validate(value)


def test_invalid_properties_names_the_reason_and_the_value():
    errors = registry.invalid_properties({"offset.lag.max": "many", "replication.factor": "0",
                                          "offset-syncs.topic.location": "middle", "emit.heartbeats.enabled": "on",
                                          "emit.checkpoints.interval.seconds": "0", "offset.lag.max.typo": "x"})
    assert errors == {
        "offset.lag.max": "expected an integer, got 'many'",
        "replication.factor": "expected -1 (the broker's default) or a positive replication factor, got '0'",
        "offset-syncs.topic.location": "expected one of source, target, got 'middle'",
        "emit.heartbeats.enabled": "expected true or false, got 'on'",
        "emit.checkpoints.interval.seconds": "expected a positive number of seconds, got '0'",
    }


def test_properties_mirrorplane_passes_over_and_mirror_fields_are_not_checked_here():
    assert registry.invalid_properties({"use.incremental.alter.configs": "whenever", "session.timeout.ms": "x",
                                        "topics.blacklist": "("}) == {}
    checked = {p.name for p in CATALOG if p.acted_on and p.owner != "mirror"}
    assert "offset.flush.interval.ms" in checked and "link.unhealthy.after.seconds" in checked


def test_get_names_an_unknown_property():
    with pytest.raises(KeyError, match="not a property the registry knows"):
        registry.get("offset.lag.maximum")
    assert registry.find("offset.lag.maximum") is None


def test_defaults_for_an_owner():
    assert registry.defaults_for("heartbeat") == {
        "emit.heartbeats.enabled": "true", "emit.heartbeats.interval.seconds": "1",
        "heartbeats.topic.replication.factor": "-1", "link.unhealthy.after.seconds": "10"}
    assert registry.defaults_for("worker")["offset.flush.interval.ms"] == "10000"
    assert "source.cluster.alias" not in registry.defaults_for("mirror")  # it has none


def test_typed_accessors_parse_the_value_or_fall_back_to_the_default():
    config = {"offset.lag.max": "5", "emit.heartbeats.interval.seconds": "0.5", "sync.group.offsets.enabled": "TRUE"}
    assert registry.get_int(config, "offset.lag.max") == 5
    assert registry.get_int({}, "offset.lag.max") == 100
    assert registry.get_float(config, "emit.heartbeats.interval.seconds") == 0.5
    assert registry.get_float({}, "refresh.topics.interval.seconds") == 600.0
    assert registry.get_bool(config, "sync.group.offsets.enabled") is True
    assert registry.get_bool({}, "sync.group.offsets.enabled") is False
    assert registry.get_str({}, "offset-syncs.topic.location") == "source"
    assert registry.get_int({}, "replication.factor") == -1
    assert registry.get_int({}, "replication.factor", mm2_default=True) == 2
    assert registry.get_int({}, "offset.flush.interval.ms") == 10_000
    assert registry.get_int({}, "offset.flush.interval.ms", mm2_default=True) == 60_000
    with pytest.raises(ValueError):
        registry.get_int({"offset.lag.max": "many"}, "offset.lag.max")
    with pytest.raises(KeyError, match="no default"):
        registry.get_str({}, "group.id")


@pytest.mark.parametrize(("raw", "expected"), [(None, 10.0), ("4", 4.0), ("0", 10.0), ("-3", 10.0), ("soon", 10.0),
                                               (2.5, 2.5)])
def test_a_valid_value_or_the_default_for_the_dashboard(raw, expected):
    config = {} if raw is None else {"link.unhealthy.after.seconds": raw}
    assert registry.get_valid_float(config, "link.unhealthy.after.seconds") == expected


def test_where_properties_live():
    assert registry.owner_of("emit.checkpoints.interval.seconds") == "checkpoint"
    assert registry.owner_of("emit.checkpoints.something.new") == "checkpoint"  # MM2's family, by prefix
    assert registry.owner_of("emit.heartbeats.something.new") == "heartbeat"
    assert registry.owner_of("some.mm2.thing") == "source"
    assert registry.owner_of("topics") == "mirror"
    assert registry.is_worker_setting("offset.flush.interval.ms")
    assert registry.is_worker_setting("offset.storage.topic") and registry.is_worker_setting("key.converter.x")
    assert not registry.is_worker_setting("offset.lag.max")
    assert registry.connector_kinds_of("offset.flush.interval.ms") == ("source",)
    assert registry.connector_kinds_of("heartbeats.topic.replication.factor") == ("heartbeat",)
    assert registry.connector_kinds_of("producer.override.linger.ms") == ("source",)
    assert registry.worker_settings({"offset.flush.interval.ms": "5000", "offset.lag.max": "1",
                                     "group.id": "g"}) == {"offset.flush.interval.ms": "5000"}
    assert registry.source_held() == {"offset-syncs.topic.location", "emit.offset-syncs.enabled", "offset.lag.max",
                                      "replication.policy.internal.topic.separator.enabled"}
