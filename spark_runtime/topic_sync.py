"""Keeping remote topics like their source topics: existence, partitions and configuration.

As MM2's MirrorSourceConnector: remote topics are created before any record is sent, with the
source's partition count and the properties set on the source topic (less
`config.properties.exclude`); partitions added on the source are added on the target; topic
configuration is synced every `sync.topic.configs.interval.seconds`. With
`topic.creation.enable=false` a missing remote topic is never created: its source topic is held
back (not read) until someone creates it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mirrorcore.acl_sync import remote_acls
from mirrorcore.admin import AclsUnavailable, KafkaAdmin
from mirrorcore.config import ConnectorSettings
from mirrorcore.filters import config_property_filter
from mirrorcore.policy import ReplicationPolicy

log = logging.getLogger(__name__)


@dataclass
class TopicSyncResult:
    created: list[str] = field(default_factory=list)
    grown: dict[str, int] = field(default_factory=dict)
    held_back: dict[str, str] = field(default_factory=dict)  # source topic -> reason


class RemoteTopics:
    def __init__(self, source_alias: str, policy: ReplicationPolicy, settings: ConnectorSettings,
                 source_admin: KafkaAdmin, target_admin: KafkaAdmin, config_sync_allowed: bool = True) -> None:
        self.source_alias = source_alias
        self.policy = policy
        self.source_admin = source_admin
        self.target_admin = target_admin
        self.creation_enabled = settings.get_bool("topic.creation.enable")
        self.replication_factor = settings.get_int("replication.factor")
        self.config_sync_enabled = config_sync_allowed and settings.get_bool("sync.topic.configs.enabled")
        self.acl_sync_enabled = config_sync_allowed and settings.get_bool("sync.topic.acls.enabled")
        self.acl_sync_interval = settings.get_float("sync.topic.acls.interval.seconds")
        self.acl_sync_note: str | None = None
        self.config_sync_interval = settings.get_float("sync.topic.configs.interval.seconds")
        self.copied = config_property_filter(settings.get("config.properties.exclude"))

    def remote(self, topic: str) -> str:
        return self.policy.format_remote_topic(self.source_alias, topic)

    def ensure(self, topics: dict[str, int]) -> TopicSyncResult:
        """Make every remote topic exist with at least its source's partitions."""
        result = TopicSyncResult()
        existing = self.target_admin.topic_partitions()
        missing = [t for t in topics if self.remote(t) not in existing]
        if missing and not self.creation_enabled:
            for topic in missing:
                result.held_back[topic] = (f"remote topic {self.remote(topic)!r} does not exist and "
                                           "topic.creation.enable=false: create it on the target to replicate")
            missing = []
        if missing:
            source_configs = self.source_admin.topic_configs(missing)
            configs = {self.remote(t): self._copied(source_configs.get(t, {})) for t in missing}
            result.created = self.target_admin.create_topics(
                {self.remote(t): topics[t] for t in missing}, self.replication_factor, configs)
            if result.created:
                log.info("created remote topics %s", result.created)
        result.grown = {self.remote(t): n for t, n in topics.items()
                        if self.remote(t) in existing and existing[self.remote(t)] < n}
        if result.grown:
            self.target_admin.add_partitions(result.grown)
            log.info("added partitions on the target: %s", result.grown)
        return result

    def sync_configs(self, topics: list[str]) -> dict[str, dict[str, str | None]]:
        """Bring remote topics' configuration in line with their source topics; returns the changes."""
        if not self.config_sync_enabled or not topics:
            return {}
        existing = self.target_admin.topic_partitions()
        topics = [t for t in topics if self.remote(t) in existing]
        source = self.source_admin.topic_configs(topics)
        target = self.target_admin.topic_configs([self.remote(t) for t in topics])
        changes: dict[str, dict[str, str | None]] = {}
        for topic in topics:
            wanted = self._copied(source.get(topic, {}))
            current = self._copied(target.get(self.remote(topic), {}))
            change: dict[str, str | None] = {k: v for k, v in wanted.items() if current.get(k) != v}
            change |= {k: None for k in current if k not in wanted}  # back to the target's default
            if change:
                changes[self.remote(topic)] = change
        if changes:
            self.target_admin.alter_topic_configs(changes)
            log.info("synced topic configuration: %s", changes)
        return changes

    def sync_acls(self, topics: list[str]) -> int:
        """Copy topic ACLs to remote topics (see acl_sync); returns how many were created.

        Like MM2, a source without an authorizer, or one that will not show us its ACLs, turns
        ACL sync off with a note instead of failing replication.
        """
        if not self.acl_sync_enabled or not topics:
            return 0
        try:
            source_acls = self.source_admin.topic_acls()
        except AclsUnavailable as error:
            self.acl_sync_note = f"ACL sync inactive: {error}"
            return 0
        selected = set(topics)
        wanted = remote_acls(source_acls, selected.__contains__, self.remote)
        existing = set(self.target_admin.topic_acls()) if wanted else set()
        missing = sorted(wanted - existing, key=lambda acl: (acl.topic, acl.principal, acl.operation))
        self.target_admin.create_topic_acls(missing)
        self.acl_sync_note = None
        if missing:
            log.info("synced %d topic ACLs", len(missing))
        return len(missing)

    def _copied(self, properties: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in properties.items() if self.copied.matches(k)}
