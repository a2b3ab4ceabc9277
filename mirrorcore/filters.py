"""Topic and group selection with MirrorMaker 2's semantics.

A filter value is a comma-separated list of names or regular expressions; a name is selected
when it matches one of them in full. Defaults are MM2's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mirrorcore import registry
from mirrorcore.patterns import PatternError as PatternError
from mirrorcore.patterns import compile_patterns as compile_patterns
from mirrorcore.policy import ReplicationPolicy

# Each MM2 property's default, from the registry.
DEFAULT_TOPICS = registry.get_str({}, "topics")
DEFAULT_TOPICS_EXCLUDE = registry.get_str({}, "topics.exclude")
DEFAULT_GROUPS = registry.get_str({}, "groups")
DEFAULT_GROUPS_EXCLUDE = registry.get_str({}, "groups.exclude")
DEFAULT_CONFIG_PROPERTIES_EXCLUDE = registry.get_str({}, "config.properties.exclude")


@dataclass(frozen=True)
class NameFilter:
    include: str = DEFAULT_TOPICS
    exclude: str = DEFAULT_TOPICS_EXCLUDE
    _include: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _exclude: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_include", compile_patterns(self.include))
        object.__setattr__(self, "_exclude", compile_patterns(self.exclude))

    def matches(self, name: str) -> bool:
        if self._include is None or not self._include.fullmatch(name):
            return False
        return not (self._exclude and self._exclude.fullmatch(name))


def config_property_filter(exclude: str = DEFAULT_CONFIG_PROPERTIES_EXCLUDE) -> NameFilter:
    """Which topic properties are copied to remote topics (all but `config.properties.exclude`)."""
    return NameFilter(".*", exclude)


@dataclass(frozen=True)
class TopicSelector:
    """MirrorSourceConnector's decision: filter or heartbeats, never internal, never a cycle."""

    topic_filter: NameFilter
    policy: ReplicationPolicy
    target_alias: str

    def should_replicate(self, topic: str) -> bool:
        if self.policy.is_internal_topic(topic) or self.policy.is_cycle(topic, self.target_alias):
            return False
        return self.topic_filter.matches(topic) or self.policy.is_heartbeats_topic(topic)

    def select(self, topics: list[str] | set[str]) -> list[str]:
        return sorted(topic for topic in topics if self.should_replicate(topic))
