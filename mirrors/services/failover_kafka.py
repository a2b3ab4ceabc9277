"""What failover and failback read from and write to the clusters: offset syncs and consumer groups.

One object per verb or beat pass; it keeps one admin client per cluster and each flow's offset syncs
for its lifetime. Tests replace it with an in-memory double of the same methods.
"""

from __future__ import annotations

import logging

from mirrorcore import registry, remote_cluster
from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrorcore.formats import OffsetSync
from mirrorcore.groups import ConsumerGroups
from mirrors.choices import ConnectorKind
from mirrors.models import Cluster, Mirror
from mirrors.services import offsets
from mirrors.services.failover_plan import Offsets, SyncIndex

log = logging.getLogger(__name__)


class GroupClusters:
    """Consumer groups and offset syncs of registered clusters; every failure is a ClusterError."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout or offsets.default_timeout()
        self._admins: dict[str, KafkaAdmin] = {}
        self._syncs: dict[str, SyncIndex] = {}

    def _groups(self, cluster: Cluster) -> ConsumerGroups:
        if cluster.alias not in self._admins:
            try:
                self._admins[cluster.alias] = KafkaAdmin(cluster.connection(), timeout=self.timeout)
            except ValueError as error:  # invalid client properties: it cannot be reached either
                raise ClusterError(str(error)) from error
        return ConsumerGroups(self._admins[cluster.alias])

    def group_names(self, cluster: Cluster) -> list[str]:
        return self._groups(cluster).names()

    def committed(self, cluster: Cluster, group: str) -> Offsets:
        return self._groups(cluster).committed(group)

    def activity(self, cluster: Cluster, group: str) -> tuple[bool, str]:
        """(no member on `cluster`, why not when it has some)."""
        activity = self._groups(cluster).activity(group)
        return activity.idle, (f"group {group!r} is active on {cluster.alias} ({activity.members} members, "
                               f"{activity.state}): its offsets are written there once it has no member")

    def partition_counts(self, cluster: Cluster, topics: list[str]) -> dict[str, int]:
        self._groups(cluster)
        return self._admins[cluster.alias].partition_counts(topics)

    def commit(self, cluster: Cluster, group: str, plan: Offsets) -> None:
        self._groups(cluster).commit(group, plan)

    def syncs(self, mirror: Mirror) -> SyncIndex:
        """The mirror's offset syncs (`mm2-offset-syncs.<target>.internal` where its source connector writes
        them), read to their end once per object."""
        if mirror.name not in self._syncs:
            source = mirror.connectors.filter(kind=ConnectorKind.SOURCE).first()
            location = registry.get_str(source.config if source else {}, "offset-syncs.topic.location")
            cluster = mirror.target if location == "target" else mirror.source
            topic = offsets.mirror_policy(mirror).offset_syncs_topic(mirror.target.alias)
            records = remote_cluster.read_topic(cluster.connection(), topic, self.timeout) or []
            index = SyncIndex()
            for key, value in records:
                try:
                    index.add(OffsetSync.decode(key, value))
                except Exception:  # noqa: BLE001 - a foreign record is skipped, as MM2 does
                    log.warning("skipping an undecodable offset sync in %s on %s", topic, cluster.alias)
            self._syncs[mirror.name] = index
        return self._syncs[mirror.name]
