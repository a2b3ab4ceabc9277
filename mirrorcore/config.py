"""The validated configuration one mirror application runs with (written by the control plane).

It arrives as a JSON file readable only by its owner; its path is the only thing on the
command line, so credentials never show in `ps`, logs or the Spark UI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirrorcore import registry
from mirrorcore.connection import ClusterConnection
from mirrorcore.filters import (
    DEFAULT_GROUPS,
    DEFAULT_GROUPS_EXCLUDE,
    DEFAULT_TOPICS,
    DEFAULT_TOPICS_EXCLUDE,
    NameFilter,
    TopicSelector,
)
from mirrorcore.overrides import OverridePolicy, refusals
from mirrorcore.policy import ReplicationPolicy

CONNECTOR_KINDS = ("source", "checkpoint", "heartbeat")


@dataclass(frozen=True)
class ConnectorSettings:
    """A connector's properties; a property left out reads as its default in the registry, unless `default`
    is given (for a name the registry does not know)."""

    tasks_max: int = 1
    config: dict[str, str] = field(default_factory=dict)

    def get(self, name: str, default: str | None = None) -> str:
        return str(self.config.get(name, default)) if default is not None else registry.get_str(self.config, name)

    def get_int(self, name: str, default: int | None = None, *, mm2_default: bool = False) -> int:
        if default is None:
            return registry.get_int(self.config, name, mm2_default=mm2_default)
        return int(self.config.get(name, default))

    def get_float(self, name: str, default: float | None = None) -> float:
        return float(self.config.get(name, default)) if default is not None else registry.get_float(self.config, name)

    def get_bool(self, name: str, default: bool | None = None) -> bool:
        if default is None:
            return registry.get_bool(self.config, name)
        return registry.parse_bool(str(self.config.get(name, default)))

    def prefixed(self, prefix: str) -> dict[str, str]:
        """Client overrides passed through with MM2's prefixes (`consumer.`, `producer.override.`)."""
        return {k[len(prefix):]: str(v) for k, v in self.config.items() if k.startswith(prefix)}


@dataclass(frozen=True)
class MirrorConfig:
    name: str
    generation: int
    source: ClusterConnection
    target: ClusterConnection
    work_dir: str
    redis_url: str
    topics: str = DEFAULT_TOPICS
    topics_exclude: str = DEFAULT_TOPICS_EXCLUDE
    groups: str = DEFAULT_GROUPS
    groups_exclude: str = DEFAULT_GROUPS_EXCLUDE
    replication_policy: str = "default"
    separator: str = "."
    connectors: dict[str, ConnectorSettings] = field(default_factory=dict)
    # URI of this mirror's checkpoint folder (`<CHECKPOINT_ROOT>/<mirror name>`): a local path or
    # `file:` URI, `hdfs://...`, `s3a://...`; a path without a scheme is on Hadoop's default file
    # system. Empty: `<work_dir>/checkpoints`, where configurations written before it lived.
    checkpoint_location: str = ""
    # The mirror's Spark properties and the installation's override policy, for the driver's own check.
    spark_conf: dict[str, str] = field(default_factory=dict)
    overrides: OverridePolicy = field(default_factory=OverridePolicy)
    # Where a mirror that took over from a running MM2 starts each partition without a checkpoint
    # (mirrorcore/adoption.py); None: not adopted.
    adopted: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.checkpoint_location:
            object.__setattr__(self, "checkpoint_location", str(Path(self.work_dir) / "checkpoints"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MirrorConfig:
        connectors = {
            kind: ConnectorSettings(
                tasks_max=int(spec.get("tasks_max", 1)),
                config={str(k): str(v) for k, v in (spec.get("config") or {}).items()},
            )
            for kind, spec in (data.get("connectors") or {}).items()
            if kind in CONNECTOR_KINDS
        }
        for kind in CONNECTOR_KINDS:
            connectors.setdefault(kind, ConnectorSettings())
        return cls(
            name=data["name"],
            generation=int(data.get("generation", 1)),
            source=ClusterConnection.from_dict(data["source"]),
            target=ClusterConnection.from_dict(data["target"]),
            work_dir=data["work_dir"],
            redis_url=data["redis_url"],
            topics=data.get("topics", DEFAULT_TOPICS),
            topics_exclude=data.get("topics_exclude", DEFAULT_TOPICS_EXCLUDE),
            groups=data.get("groups", DEFAULT_GROUPS),
            groups_exclude=data.get("groups_exclude", DEFAULT_GROUPS_EXCLUDE),
            replication_policy=data.get("replication_policy", "default"),
            separator=data.get("separator", "."),
            connectors=connectors,
            checkpoint_location=str(data.get("checkpoint_location") or ""),
            spark_conf={str(k): str(v) for k, v in (data.get("spark_conf") or {}).items()},
            overrides=OverridePolicy.from_dict(data.get("overrides")),
            adopted=data.get("adopted") or None,
        )

    @classmethod
    def load(cls, path: str | Path) -> MirrorConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def refused(self) -> list[str]:
        """What the installation's override policy refuses in this configuration (empty: it may run)."""
        return refusals(self.spark_conf, {c.alias: c.config for c in (self.source, self.target)},
                        {kind: c.config for kind, c in self.connectors.items()}, self.overrides)

    @property
    def legacy(self) -> bool:
        """MM1 emulation: names kept; heartbeats, checkpoints and topic config/ACL sync off."""
        return self.replication_policy == "legacy"

    @property
    def policy(self) -> ReplicationPolicy:
        internal = self.connectors["source"].get_bool("replication.policy.internal.topic.separator.enabled")
        return ReplicationPolicy(self.replication_policy, self.separator, internal)

    @property
    def topic_selector(self) -> TopicSelector:
        return TopicSelector(NameFilter(self.topics, self.topics_exclude), self.policy, self.target.alias)

    def checkpoint_dir(self, connector: str) -> str:
        """A connector's streaming checkpoint, `<checkpoint_location>/<connector>`, as a URI string
        Spark's `checkpointLocation` and Hadoop's FileSystem take (plain paths stay plain)."""
        return f"{self.checkpoint_location.rstrip('/')}/{connector}"
