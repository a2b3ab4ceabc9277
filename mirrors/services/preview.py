"""What a mirror's topic filters select on its source, before it exists: the form's live preview.

The decision is the source connector's own (spark_runtime's TopicSelector and ReplicationPolicy), so
the preview cannot disagree with the running mirror; each topic left out comes with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings

from mirrorcore.filters import NameFilter, TopicSelector
from mirrorcore.policy import ReplicationPolicy
from mirrors.models import Cluster
from mirrors.services import clusters

LIMIT = 200  # topics listed per list; the counts are always complete

TopicLister = Callable[[Cluster], dict[str, int]]


def list_topics(cluster: Cluster) -> dict[str, int]:
    """Every topic of the cluster with its partition count; ClusterError when it cannot be reached.

    Uses the cluster check's admin client (`clusters.KafkaAdmin`), so tests replace both at once.
    """
    timeout = settings.CLUSTER_CHECK_TIMEOUT_SECONDS - 1
    return clusters.KafkaAdmin(cluster.connection(), timeout=timeout).topic_partitions()


def _first_match(patterns: str, topic: str) -> str | None:
    for element in (e.strip() for e in patterns.split(",")):
        if element and re.fullmatch(element, topic):
            return element
    return None


def exclusion_reason(selector: TopicSelector, topic: str) -> str | None:
    """Why the source connector would leave `topic` out, or None when it replicates it."""
    policy, topic_filter = selector.policy, selector.topic_filter
    if policy.is_internal_topic(topic):
        return "internal topic (Kafka's or MM2's own): never replicated"
    if policy.is_cycle(topic, selector.target_alias):
        return f"came from {selector.target_alias!r}, the target: replicating it back would make a cycle"
    if topic_filter.matches(topic) or policy.is_heartbeats_topic(topic):
        return None
    if _first_match(topic_filter.include, topic) is None:
        return "not matched by topics"
    return f"excluded by topics.exclude {_first_match(topic_filter.exclude, topic)!r}"


def preview(source: Cluster, target_alias: str | None, *, topics: str, topics_exclude: str,
            replication_policy: str = "default", separator: str = ".", limit: int = LIMIT,
            lister: TopicLister | None = None) -> dict:
    """The topics the mirror would replicate with their remote names, and those it would not, with why.

    Patterns must be valid (the serializer checks them); ClusterError when the source cannot be reached.
    """
    policy = ReplicationPolicy(replication_policy, separator)
    selector = TopicSelector(NameFilter(topics, topics_exclude), policy, target_alias or "")
    partitions = (lister or list_topics)(source)
    matched, excluded = [], []
    for topic in sorted(partitions):
        reason = exclusion_reason(selector, topic)
        if reason is None:
            matched.append({"topic": topic, "remote_topic": policy.format_remote_topic(source.alias, topic),
                            "partitions": partitions[topic]})
        else:
            excluded.append({"topic": topic, "reason": reason})
    return {
        "source": source.alias,
        "target": target_alias,
        "matched": len(matched),
        "total": len(partitions),
        "topics": matched[:limit],
        "excluded": excluded[:limit],
        "limit": limit,
        "truncated": len(matched) > limit or len(excluded) > limit,
    }
