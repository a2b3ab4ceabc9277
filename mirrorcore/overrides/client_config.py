"""Which Kafka client properties (a cluster's `config`, a connector's `consumer.*`, `producer.override.*`,
`admin.*`) the override policy lets through.

They reach Java clients (Spark's Kafka source, our writer) and librdkafka (admin clients, the
checkpoint and heartbeat producers). The allowlist holds timeouts, batching, fetching, compression
and identity settings. Properties that load classes (interceptors, metric reporters, partitioners,
login and callback handlers, config providers), choose a login module or command, fetch from URLs,
read files or load libraries on the worker's host are refused unless the installation allows them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mirrorcore.overrides.policy import (
    ALL,
    CLIENT_CONFIG_ALLOW_ENV,
    CLIENT_CONFIG_POLICY_ENV,
    NONE,
    OverridePolicy,
    listed,
)

ALLOWED: frozenset[str] = frozenset({
    # every client (Java and librdkafka names)
    "client.id", "client.rack", "client.dns.lookup", "request.timeout.ms", "default.api.timeout.ms", "retries",
    "retry.backoff.ms", "retry.backoff.max.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms", "connections.max.idle.ms",
    "metadata.max.age.ms", "metadata.max.idle.ms", "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms", "receive.buffer.bytes", "send.buffer.bytes", "metrics.num.samples",
    "metrics.sample.window.ms", "metrics.recording.level", "enable.metrics.push", "socket.timeout.ms",
    "socket.keepalive.enable", "socket.nagle.disable", "socket.send.buffer.bytes", "socket.receive.buffer.bytes",
    "topic.metadata.refresh.interval.ms", "broker.address.family", "api.version.request",
    "ssl.endpoint.identification.algorithm", "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites",
    # producers
    "acks", "linger.ms", "batch.size", "buffer.memory", "compression.type", "compression.gzip.level",
    "compression.lz4.level", "compression.zstd.level", "max.request.size", "max.block.ms", "delivery.timeout.ms",
    "max.in.flight.requests.per.connection", "enable.idempotence", "partitioner.ignore.keys",
    "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms", "queue.buffering.max.ms",
    "queue.buffering.max.messages", "queue.buffering.max.kbytes", "batch.num.messages", "message.max.bytes",
    "message.timeout.ms", "message.send.max.retries", "compression.codec", "compression.level",
    "sticky.partitioning.linger.ms",
    # consumers
    "fetch.min.bytes", "fetch.max.bytes", "fetch.max.wait.ms", "max.partition.fetch.bytes", "max.poll.records",
    "max.poll.interval.ms", "session.timeout.ms", "heartbeat.interval.ms", "isolation.level", "check.crcs",
    "exclude.internal.topics", "auto.commit.interval.ms", "allow.auto.create.topics", "fetch.wait.max.ms",
    "fetch.message.max.bytes", "fetch.queue.backoff.ms", "fetch.error.backoff.ms", "queued.min.messages",
    "queued.max.messages.kbytes",
})

# MM2's prefixes for the clients of a connector and of a cluster (`A.producer.x` in MM2's properties).
CONNECTOR_CLIENT_PREFIXES = ("producer.override.", "producer.", "consumer.", "admin.",
                             "source.cluster.", "target.cluster.", "source.admin.", "target.admin.")
CLUSTER_CLIENT_PREFIXES = ("producer.", "consumer.", "admin.")

# Properties that run code, change where or how a client connects, or read the host, and why.
RUNS_CODE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|\.)class(es)?$|reporters$|serializer$|^config\.providers|^security\.providers$|"
                r"\.callback\.handler\.|^partition\.assignment\.strategy$"),
     "it loads classes into the Kafka client (interceptors, metric reporters, partitioners, serializers, login "
     "and callback handlers, config providers)"),
    (re.compile(r"^sasl\.(jaas\.config|kerberos\.|login\.)|^java\.security\."),
     "it chooses a login module or runs a login command"),
    (re.compile(r"^(sasl\.oauthbearer\.|oauthbearer\.)|\.urls?$"), "it makes the client fetch from a URL (OAuth)"),
    (re.compile(r"\.location$|\.paths?$|^ssl\.(keystore|truststore|key|ca|certificate|crl|engine|providers)"),
     "it reads files or loads libraries on the worker's host, or replaces the cluster's TLS material"),
    (re.compile(r"^(bootstrap\.servers|security\.protocol|sasl\.mechanisms?|sasl\.username|sasl\.password)$"),
     "where and how a cluster's clients connect is set by the cluster's own fields"),
)
# MM2 properties (not client properties) that name classes; Mirrorplane loads none of them.
_NAMES_CLASSES = re.compile(r"(^|\.)class(es)?$|^config\.providers|^(transforms|predicates)(\.|$)|converter$")


def runs_code(prop: str) -> str | None:
    """Why setting the client property `prop` (without prefix) is dangerous, or None."""
    return next((reason for pattern, reason in RUNS_CODE if pattern.search(prop)), None)


def client_property(key: str, *, cluster: bool) -> str | None:
    """The client property a config key sets (its MM2 prefix removed), or None for an MM2 property
    of a connector. Every key of a cluster's config is a client property."""
    for prefix in CLUSTER_CLIENT_PREFIXES if cluster else CONNECTOR_CLIENT_PREFIXES:
        if key.startswith(prefix):
            rest = key[len(prefix):]
            nested = next((p for p in CLUSTER_CLIENT_PREFIXES if rest.startswith(p)), "")
            return rest[len(nested):]
    return key if cluster else None


def allowed_properties(policy: OverridePolicy) -> list[str]:
    """The client properties (without prefix) a mirror may set under `allowlist`, for forms and docs."""
    return sorted(ALLOWED | set(policy.client_config_allow))


def refusal(key: str, policy: OverridePolicy, *, cluster: bool = False) -> str | None:
    """Why the policy refuses `key` in a cluster's (`cluster=True`) or a connector's config, naming the
    key and the setting that would allow it; None when it may be set."""
    prop = client_property(key, cluster=cluster)
    if prop is None:  # an MM2 property: only those naming classes concern the policy
        if policy.client_config == ALL or not _NAMES_CLASSES.search(key) or listed(key, policy.client_config_allow,
                                                                                  exact_only=True):
            return None
        return (f"{key}: refused because it names a class to load, and Mirrorplane loads none a mirror names; "
                f"{CLIENT_CONFIG_POLICY_ENV}=all, or {CLIENT_CONFIG_ALLOW_ENV}={key}, allows it")
    mode = policy.client_config
    if mode == ALL:
        return None
    if mode == NONE:
        return (f"{key}: this installation lets mirrors and clusters set no Kafka client properties "
                f"({CLIENT_CONFIG_POLICY_ENV}=none; allowlist or all allows some or every property)")
    danger = runs_code(prop)
    if danger is None and prop in ALLOWED:
        return None
    exact = danger is not None
    if listed(prop, policy.client_config_allow, exact_only=exact) or listed(key, policy.client_config_allow,
                                                                            exact_only=exact):
        return None
    if danger is not None:
        return (f"{key}: refused because {danger}; {CLIENT_CONFIG_POLICY_ENV}=all, or "
                f"{CLIENT_CONFIG_ALLOW_ENV}={prop}, allows it")
    return (f"{key}: not among the Kafka client properties a mirror may set (timeouts, batching, fetching, "
            f"compression); {CLIENT_CONFIG_ALLOW_ENV}={prop}, or {CLIENT_CONFIG_POLICY_ENV}=all, allows it")


def refused_client_config(config: Mapping[str, object], policy: OverridePolicy, *, cluster: bool = False
                          ) -> dict[str, str]:
    """Key -> refusal, for every key of a cluster's (`cluster=True`) or a connector's config the policy refuses."""
    return {key: reason for key in config if (reason := refusal(str(key), policy, cluster=cluster)) is not None}
