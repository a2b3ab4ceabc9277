"""Every property Mirrorplane knows: MM2's connector properties, the Kafka Connect worker settings an MM2
configuration carries, and Mirrorplane's own. Defaults are MM2's (or Kafka Connect's) as documented.
"""

from __future__ import annotations

from mirrorcore.registry.model import (
    ANY,
    BOOLEAN,
    CLASS_NAME,
    PATTERNS,
    REPLICATION_FACTOR,
    SECONDS,
    SEPARATOR,
    ConnectorKind,
    Property,
    PropertyType,
    Validator,
    integer,
    one_of,
)

DEFAULT_TOPICS_EXCLUDE = r".*[\-\.]internal, .*\.replica, __.*"
DEFAULT_GROUPS_EXCLUDE = "console-consumer-.*, connect-.*, __.*"
# Topic properties never copied to remote topics.
DEFAULT_CONFIG_PROPERTIES_EXCLUDE = (
    r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, "
    r"unclean\.leader\.election\.enable, min\.insync\.replicas"
)
_POLICY_CLASSES = ("DefaultReplicationPolicy", "IdentityReplicationPolicy", "LegacyReplicationPolicy")


def _policy_class(value: str) -> None:
    if value.strip().rsplit(".", 1)[-1] not in _POLICY_CLASSES:
        raise ValueError(f"expected one of {', '.join(_POLICY_CLASSES)} (in any package)")


POLICY_CLASS = Validator(_policy_class, ", ".join(_POLICY_CLASSES) + " (in any package)")
_NO_CLASS = "Mirrorplane loads no class a mirror names (the override policy refuses it unless allowed)"


def _mirror(name: str, type_: PropertyType, default: str | None, field: str, doc: str, validator: Validator = ANY,
            alias_of: str | None = None) -> Property:
    return Property(name, type_, default, "mirror", doc, validator, field=field, alias_of=alias_of)


CATALOG: tuple[Property, ...] = (
    # -- once per mirror -------------------------------------------------------------------------------
    _mirror("topics", "list", ".*", "topics", "Topics to replicate, each name or regular expression matching a "
            "whole name; heartbeats topics always, internal topics and cycles never.", PATTERNS),
    _mirror("topics.exclude", "list", DEFAULT_TOPICS_EXCLUDE, "topics_exclude",
            "Topics never replicated, even when `topics` matches them.", PATTERNS),
    _mirror("topics.blacklist", "list", None, "topics_exclude", "MM2's former name of `topics.exclude`.",
            PATTERNS, alias_of="topics.exclude"),
    _mirror("groups", "list", ".*", "groups", "Consumer groups whose offsets are checkpointed.", PATTERNS),
    _mirror("groups.exclude", "list", DEFAULT_GROUPS_EXCLUDE, "groups_exclude",
            "Consumer groups never checkpointed, even when `groups` matches them.", PATTERNS),
    _mirror("groups.blacklist", "list", None, "groups_exclude", "MM2's former name of `groups.exclude`.",
            PATTERNS, alias_of="groups.exclude"),
    _mirror("replication.policy.class", "class", "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
            "replication_policy", "How remote topics are named: default (`<source>.<topic>`), identity (names "
            "kept), or legacy (MM1: names kept, no heartbeats, checkpoints nor config and ACL sync).", POLICY_CLASS),
    _mirror("replication.policy.separator", "string", ".", "separator",
            "Separator between the source alias and the topic in remote topic names.", SEPARATOR),
    _mirror("source.cluster.alias", "string", None, "source",
            "Alias of the source cluster, which names remote topics."),
    _mirror("target.cluster.alias", "string", "target", "target",
            "Alias of the target cluster, which names the internal topics."),
    # -- source connector -------------------------------------------------------------------------------
    Property("refresh.topics.enabled", "boolean", "true", "source",
             "Whether new source topics and partitions are looked for periodically.", BOOLEAN),
    Property("refresh.topics.interval.seconds", "seconds", "600", "source",
             "How often new source topics and partitions are looked for.", SECONDS),
    Property("sync.topic.configs.enabled", "boolean", "true", "source",
             "Whether remote topics' configuration is kept in line with their source topics'.", BOOLEAN),
    Property("sync.topic.configs.interval.seconds", "seconds", "600", "source",
             "How often topic configuration is synced.", SECONDS),
    Property("sync.topic.acls.enabled", "boolean", "true", "source",
             "Whether literal topic ACLs are copied to remote topics (never ALLOW WRITE; ALLOW ALL becomes READ).",
             BOOLEAN),
    Property("sync.topic.acls.interval.seconds", "seconds", "600", "source", "How often topic ACLs are synced.",
             SECONDS),
    Property("config.properties.exclude", "list", DEFAULT_CONFIG_PROPERTIES_EXCLUDE, "source",
             "Topic properties never copied to remote topics.", PATTERNS),
    Property("topic.creation.enable", "boolean", "true", "source",
             "Kafka Connect's switch for topic creation, read on the source connector: false holds back a source "
             "topic whose remote topic is missing.", BOOLEAN),
    Property("replication.factor", "int", "2", "source",
             "Replication factor of the remote topics Mirrorplane creates; unset, the target broker's default.",
             REPLICATION_FACTOR, mirrorplane_default="-1"),
    Property("offset-syncs.topic.location", "choice", "source", "source",
             "Cluster holding the offset-syncs topic; the checkpoint connector reads it there.",
             one_of("source", "target"), applies_to=("checkpoint",), aligned_on=("checkpoint",)),
    Property("offset-syncs.topic.replication.factor", "int", "3", "source",
             "Replication factor of the offset-syncs topic; unset, the broker's default.", REPLICATION_FACTOR,
             mirrorplane_default="-1"),
    Property("offset.lag.max", "long", "100", "source",
             "Records a translation may fall behind before a new offset sync is written; it bounds what a "
             "consumer re-reads after failing over.", integer(0), applies_to=("checkpoint",)),
    Property("emit.offset-syncs.enabled", "boolean", "true", "source",
             "Whether offset syncs are written; without them the checkpoint connector translates nothing.",
             BOOLEAN, applies_to=("checkpoint",)),
    Property("replication.policy.internal.topic.separator.enabled", "boolean", "true", "source",
             "Whether the policy's separator is also used in the internal topics' names (offset syncs, "
             "checkpoints).", BOOLEAN, applies_to=("checkpoint", "heartbeat"), aligned_on=("checkpoint",)),
    Property("topic.filter.class", "class", "org.apache.kafka.connect.mirror.DefaultTopicFilter", "source",
             f"Selects the topics to replicate; Mirrorplane applies MM2's default filter. {_NO_CLASS}.", CLASS_NAME,
             acted_on=False),
    Property("config.property.filter.class", "class", "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
             "source", f"Selects the topic properties to copy; Mirrorplane applies MM2's default filter. {_NO_CLASS}.",
             CLASS_NAME, acted_on=False),
    Property("use.incremental.alter.configs", "choice", "requested", "source",
             "Deprecated in MM2: which API syncs topic configuration; Mirrorplane always alters it incrementally.",
             one_of("requested", "required", "never"), acted_on=False),
    Property("batch.max.records", "int", "1000000", "source",
             "Records per micro-batch at most (Spark's maxOffsetsPerTrigger); a driver that dies replays at most "
             "its unfinished batch.", integer(1), origin="mirrorplane"),
    Property("replication.mode", "choice", "auto", "source",
             "How the source connector copies: in micro-batches, in Spark's real-time mode, or auto, which chooses "
             "by the backlog.", one_of("auto", "micro-batch", "real-time"), origin="mirrorplane"),
    Property("replication.real.time.consumers", "choice", "per-task-slot", "source",
             "How real-time mode reads: a consumer per task slot, reading its share of the partitions as MM2's tasks "
             "do (per-task-slot), or Spark's Kafka source, a consumer and a task slot per partition (per-partition).",
             one_of("per-task-slot", "per-partition"), origin="mirrorplane"),
    Property("replication.mode.auto.backlog.records", "long", "50000", "source",
             "Auto mode: a backlog above this is copied in micro-batches, real-time mode takes over within it (and "
             "falls back only above 4 times it).", integer(0), origin="mirrorplane"),
    # -- checkpoint connector ---------------------------------------------------------------------------
    Property("emit.checkpoints.enabled", "boolean", "true", "checkpoint",
             "Whether consumer groups' translated offsets are written as checkpoints to the target.", BOOLEAN),
    Property("emit.checkpoints.interval.seconds", "seconds", "60", "checkpoint", "How often checkpoints are emitted.",
             SECONDS),
    Property("sync.group.offsets.enabled", "boolean", "false", "checkpoint",
             "Whether translated offsets are also committed to the groups on the target (only while a group has no "
             "member there, never backwards).", BOOLEAN),
    Property("sync.group.offsets.interval.seconds", "seconds", "60", "checkpoint",
             "How often translated offsets are committed on the target.", SECONDS),
    Property("refresh.groups.enabled", "boolean", "true", "checkpoint",
             "Whether new consumer groups are looked for periodically.", BOOLEAN),
    Property("refresh.groups.interval.seconds", "seconds", "600", "checkpoint",
             "How often new consumer groups are looked for.", SECONDS),
    Property("checkpoints.topic.replication.factor", "int", "3", "checkpoint",
             "Replication factor of the checkpoints topic; unset, the broker's default.", REPLICATION_FACTOR,
             mirrorplane_default="-1"),
    Property("group.filter.class", "class", "org.apache.kafka.connect.mirror.DefaultGroupFilter", "checkpoint",
             f"Selects the consumer groups to checkpoint; Mirrorplane applies MM2's default filter. {_NO_CLASS}.",
             CLASS_NAME, acted_on=False),
    # -- heartbeat connector ----------------------------------------------------------------------------
    Property("emit.heartbeats.enabled", "boolean", "true", "heartbeat", "Whether heartbeats are emitted.", BOOLEAN),
    Property("emit.heartbeats.interval.seconds", "seconds", "1", "heartbeat", "How often a heartbeat is emitted.",
             SECONDS),
    Property("heartbeats.topic.replication.factor", "int", "3", "heartbeat",
             "Replication factor of the heartbeats topics; unset, the broker's default.", REPLICATION_FACTOR,
             mirrorplane_default="-1"),
    Property("link.unhealthy.after.seconds", "seconds", "10", "heartbeat",
             "The link is unhealthy when no heartbeat has arrived for this long.", SECONDS, origin="mirrorplane"),
    # -- Kafka Connect worker ---------------------------------------------------------------------------
    Property("offset.flush.interval.ms", "long", "60000", "worker",
             "How often Kafka Connect commits source offsets: micro-batches promote each partition's latest offset "
             "sync this often, and a real-time query in the driver's JVM (local[N]) syncs and commits its positions "
             "this often (10 s unless set); a real-time query on executors has epochs this long (Kafka Connect's "
             "60 s unless set, at least 5 s).", integer(0), mirrorplane_default="10000", applies_to=("source",)),
    Property("offset.flush.timeout.ms", "long", "5000", "worker",
             "How long Kafka Connect waits for an offset commit; Mirrorplane commits through Spark's checkpoint.",
             integer(0), acted_on=False),
    Property("task.shutdown.graceful.timeout.ms", "long", "5000", "worker",
             "How long Kafka Connect waits for tasks to stop; Mirrorplane stops its queries itself.", integer(0),
             acted_on=False),
    Property("group.id", "string", None, "worker",
             "Kafka Connect's group (MM2's dedicated mode names it `<source>-mm2`); Mirrorplane forms none.",
             acted_on=False),
    Property("session.timeout.ms", "int", "10000", "worker", "Kafka Connect's group session timeout.", integer(1),
             acted_on=False),
    Property("heartbeat.interval.ms", "int", "3000", "worker", "Kafka Connect's group heartbeat interval.",
             integer(1), acted_on=False),
    Property("scheduled.rebalance.max.delay.ms", "int", "300000", "worker",
             "How long Kafka Connect waits for a departed worker before rebalancing.", integer(0), acted_on=False),
    Property("connector.client.config.override.policy", "string", "All", "worker",
             "Which client overrides Kafka Connect lets connectors set; Mirrorplane's override policy decides "
             "instead.", acted_on=False),
    Property("header.converter", "class", "org.apache.kafka.connect.converters.ByteArrayConverter", "worker",
             "Kafka Connect's header converter (MM2's dedicated mode defaults it to bytes); Mirrorplane copies "
             "headers as bytes.", CLASS_NAME, acted_on=False),
    Property("plugin.path", "list", None, "worker", "Where Kafka Connect looks for plugins.", acted_on=False),
    Property("plugin.discovery", "string", "hybrid_warn", "worker", "How Kafka Connect discovers plugins.",
             acted_on=False),
    Property("listeners", "list", "http://:8083", "worker", "Kafka Connect's REST listeners.", acted_on=False),
)

# Families of Kafka Connect worker settings, by name prefix: internal topics, converters, REST, config
# providers, MM2's dedicated mode. Mirrorplane runs no Connect worker and passes them over.
WORKER_PREFIXES = ("config.storage.", "offset.storage.", "status.storage.", "key.converter", "value.converter",
                   "rest.", "config.providers", "dedicated.mode.")
# Connector properties not in the catalog go to a connector by name prefix, as MM2 groups them; others
# to the source connector.
CONNECTOR_PREFIXES: dict[ConnectorKind, tuple[str, ...]] = {
    "checkpoint": ("emit.checkpoints.", "sync.group.offsets.", "refresh.groups.", "group.filter."),
    "heartbeat": ("emit.heartbeats.",),
}
