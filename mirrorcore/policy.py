"""Replication policies: how remote topics are named and how a topic's origin is read back.

Mirrors Kafka's DefaultReplicationPolicy and IdentityReplicationPolicy (connect-mirror-client).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mirrorcore import registry

HEARTBEATS_TOPIC = "heartbeats"
POLICIES = ("default", "identity", "legacy")


def heartbeats_off(policy: str, heartbeat_config: Mapping[str, object]) -> str | None:
    """Why a flow emits no heartbeats (the legacy policy, or `emit.heartbeats.enabled=false` in the heartbeat
    connector's config), else None; the application and the control plane both ask."""
    if policy == "legacy":
        return "heartbeats are off with the legacy replication policy (MM1 emulation)"
    if not registry.get_bool(heartbeat_config, "emit.heartbeats.enabled"):
        return "heartbeats are off (emit.heartbeats.enabled=false on the heartbeat connector)"
    return None


@dataclass(frozen=True)
class ReplicationPolicy:
    """`default`: remote topic is `<source><separator><topic>`; `identity`: name unchanged (but
    heartbeats, as MM2's IdentityReplicationPolicy); `legacy`: MM1 emulation, every name unchanged."""

    kind: str = "default"
    separator: str = "."
    internal_separator_enabled: bool = True

    def __post_init__(self) -> None:
        if self.kind not in POLICIES:
            raise ValueError(f"unknown replication policy {self.kind!r}: use one of {', '.join(POLICIES)}")
        if not self.separator:
            raise ValueError("replication.policy.separator must not be empty")

    @property
    def internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def _keeps_names(self, topic: str) -> bool:
        """Identity keeps names, except for heartbeats, which stay `A.heartbeats` as in MM2."""
        return self.kind == "legacy" or (self.kind == "identity" and not topic.endswith(HEARTBEATS_TOPIC))

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        if self._keeps_names(topic):
            return topic
        return f"{source_alias}{self.separator}{topic}"

    def topic_source(self, topic: str) -> str | None:
        """The cluster a remote topic came from, or None for a local topic (or any identity name)."""
        if self._keeps_names(topic):
            return None
        source, sep, _ = topic.partition(self.separator)
        return source if sep and source else None

    def upstream_topic(self, topic: str) -> str | None:
        if self._keeps_names(topic):
            return topic
        source = self.topic_source(topic)
        return topic[len(source) + len(self.separator):] if source else None

    def original_topic(self, topic: str) -> str:
        upstream = self.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return topic
        return self.original_topic(upstream)

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def checkpoints_topic(self, source_alias: str) -> str:
        return f"{source_alias}{self.internal_separator}checkpoints{self.internal_separator}internal"

    def offset_syncs_topic(self, target_alias: str) -> str:
        sep = self.internal_separator
        return f"mm2-offset-syncs{sep}{target_alias}{sep}internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.original_topic(topic) == HEARTBEATS_TOPIC

    def is_mm2_internal_topic(self, topic: str) -> bool:
        """Offset syncs, checkpoints and anything else named like them: `<...><sep>internal`."""
        return topic.endswith(f"{self.internal_separator}internal")

    def is_internal_topic(self, topic: str) -> bool:
        """Kafka's and MM2's own topics, never replicated."""
        return (
            topic.endswith(".internal")
            or topic.endswith("-internal")
            or topic.startswith("__")
            or topic.startswith(".")
            or self.is_mm2_internal_topic(topic)
        )

    def is_cycle(self, topic: str, target_alias: str) -> bool:
        """True when the topic (or any hop it came through) originates on the target cluster."""
        source = self.topic_source(topic)
        if source is None:
            return False
        if source == target_alias:
            return True
        upstream = self.upstream_topic(topic)
        return upstream is not None and upstream != topic and self.is_cycle(upstream, target_alias)
