"""Offset translation and replication topology of registered clusters (MM2's RemoteClusterUtils)."""

from __future__ import annotations

from django.conf import settings

from mirrorcore import registry, remote_cluster
from mirrorcore.admin import KafkaAdmin
from mirrorcore.policy import ReplicationPolicy
from mirrors.choices import ConnectorKind
from mirrors.models import Cluster, Mirror


def default_timeout() -> float:
    return settings.CLUSTER_CHECK_TIMEOUT_SECONDS - 1


def mirror_policy(mirror: Mirror) -> ReplicationPolicy:
    """The naming policy a mirror's application runs with (MirrorConfig.policy)."""
    source = mirror.connectors.filter(kind=ConnectorKind.SOURCE).first()
    enabled = registry.get_bool(source.config if source else {}, "replication.policy.internal.topic.separator.enabled")
    return ReplicationPolicy(mirror.replication_policy, mirror.separator, enabled)


def policy_for(source: Cluster | None, target: Cluster) -> ReplicationPolicy:
    """The policy of a mirror source -> target (any mirror into `target` without a source), else MM2's default."""
    mirrors = Mirror.objects.filter(target=target)
    if source is not None:
        mirrors = mirrors.filter(source=source)
    mirror = mirrors.order_by("name").first()
    return mirror_policy(mirror) if mirror else ReplicationPolicy("default", ".")


def translate(group: str, source: Cluster, target: Cluster, policy: ReplicationPolicy | None = None,
              timeout: float | None = None) -> dict:
    """`group`'s offsets on `target` from the checkpoints of flow source -> target; ClusterError if unreachable."""
    policy = policy or policy_for(source, target)
    offsets = remote_cluster.translate_offsets(target.connection(), policy, source.alias, group,
                                               timeout or default_timeout())
    return {
        "group": group,
        "source": source.alias,
        "target": target.alias,
        "checkpoints_topic": policy.checkpoints_topic(source.alias),
        "offsets": [{"topic": topic, "partition": partition, "offset": offset}
                    for (topic, partition), offset in sorted(offsets.items())],
    }


def replication_info(cluster: Cluster, sources: tuple[str, ...] = (), policy: ReplicationPolicy | None = None,
                     timeout: float | None = None) -> dict:
    """Clusters replicating into `cluster` and their hop counts, from its heartbeat topics' names.

    `sources`: aliases to report hops for even when no heartbeat topic leads from them (-1).
    """
    policy = policy or policy_for(None, cluster)
    topics = KafkaAdmin(cluster.connection(), timeout=timeout or default_timeout()).topic_partitions()
    upstream = remote_cluster.upstream_clusters(topics, policy)
    return {
        "cluster": cluster.alias,
        "upstream_clusters": sorted(upstream),
        "hops": {alias: remote_cluster.replication_hops(topics, policy, alias)
                 for alias in sorted(upstream | set(sources))},
        "heartbeat_topics": sorted(remote_cluster.heartbeat_topics(topics, policy)),
    }
