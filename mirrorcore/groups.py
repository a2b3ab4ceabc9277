"""Consumer groups as the checkpoint connector sees them: list, read, describe and commit offsets."""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition

from mirrorcore.admin import KafkaAdmin

Offsets = dict[tuple[str, int], int]
# States in which a group has no members: its committed offsets may be written from outside.
IDLE_STATES = frozenset({"EMPTY", "DEAD"})


@dataclass(frozen=True)
class GroupActivity:
    state: str  # STABLE, EMPTY, DEAD (unknown to the cluster), PREPARING_REBALANCING, ...
    members: int

    @property
    def idle(self) -> bool:
        return self.state in IDLE_STATES and self.members == 0


class ConsumerGroups:
    def __init__(self, admin: KafkaAdmin) -> None:
        self.admin = admin

    def names(self) -> list[str]:
        try:
            result = self.admin.client.list_consumer_groups(request_timeout=self.admin.timeout).result(
                timeout=self.admin.timeout)
        except Exception as error:
            raise self.admin.error(error, "listing consumer groups") from error
        return sorted(listing.group_id for listing in result.valid)

    def committed(self, group: str) -> Offsets:
        """The group's committed offsets (partitions without a commit left out)."""
        request = [ConsumerGroupTopicPartitions(group)]
        try:
            future = self.admin.client.list_consumer_group_offsets(request, request_timeout=self.admin.timeout)[group]
            result = future.result(timeout=self.admin.timeout)
        except Exception as error:
            raise self.admin.error(error, f"reading the offsets of group {group!r}") from error
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or [] if tp.offset >= 0}

    def activity(self, group: str) -> GroupActivity:
        try:
            future = self.admin.client.describe_consumer_groups([group], request_timeout=self.admin.timeout)[group]
            description = future.result(timeout=self.admin.timeout)
        except Exception as error:
            raise self.admin.error(error, f"describing group {group!r}") from error
        state = description.state
        name = state.name if isinstance(state, ConsumerGroupState) else str(state)
        return GroupActivity(name, len(description.members or []))

    def commit(self, group: str, offsets: Offsets) -> None:
        """Set the group's committed offsets; the broker refuses while the group has members."""
        if not offsets:
            return
        partitions = [TopicPartition(topic, partition, offset)
                      for (topic, partition), offset in sorted(offsets.items())]
        request = [ConsumerGroupTopicPartitions(group, partitions)]
        try:
            future = self.admin.client.alter_consumer_group_offsets(request, request_timeout=self.admin.timeout)[group]
            result = future.result(timeout=self.admin.timeout)
        except Exception as error:
            raise self.admin.error(error, f"committing offsets of group {group!r}") from error
        failed = [tp for tp in result.topic_partitions or [] if tp.error is not None]
        if failed:
            raise self.admin.error(RuntimeError(str(failed[0].error)), f"committing offsets of group {group!r}")
