"""The neutral import plan both file formats parse into, and the MM2 vocabulary they share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mirrorcore import registry

CONNECTOR_KINDS = ("source", "checkpoint", "heartbeat")
SECRET_FIELDS = ("password", "ca_pem", "cert_pem", "key_pem")

POLICY_CLASSES = {
    "default": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
    "identity": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
    "legacy": "org.apache.kafka.mirror.LegacyReplicationPolicy",
}

# MM2 properties Mirrorplane holds once per mirror (property -> Mirror field); the mirror's source and target
# name the cluster aliases.
MIRROR_PROPERTIES = {prop.name: prop.field for prop in registry.PROPERTIES.values()
                     if prop.owner == "mirror" and prop.field is not None and prop.field not in ("source", "target")}
# MM2 wants these aligned on the source and checkpoint connectors; Mirrorplane holds them once, on the
# source connector, and the checkpoint connector follows it.
SOURCE_HELD_NAMES = registry.source_held()
# Kafka Connect's offsets topic when the file names none: MM2's dedicated mode (connect-mirror-maker.sh)
# names it after the flow's source cluster, Strimzi uses one per Connect cluster.
DEDICATED_OFFSETS_TOPIC = "mm2-offsets.{source}.internal"
STRIMZI_OFFSETS_TOPIC = "mirrormaker2-cluster-offsets"
CONNECT_WORKER_REASON = "a Kafka Connect worker setting: Mirrorplane runs each mirror as a Spark application"

_PLACEHOLDER = re.compile(r"<[^<>\s]+>|\$\{[^}]+\}")


def connector_kinds_of(prop: str) -> tuple[str, ...]:
    """Which connectors a connector-level MM2 property belongs to (its owner in the registry)."""
    return registry.connector_kinds_of(prop)


def is_connect_worker_property(prop: str) -> bool:
    """A Kafka Connect worker setting Mirrorplane passes over (it runs no Connect worker)."""
    return registry.is_worker_setting(prop) and not is_kept_worker_setting(prop)


def is_kept_worker_setting(prop: str) -> bool:
    """A Kafka Connect worker setting Mirrorplane acts on: kept, in the connectors it applies to."""
    found = registry.find(prop)
    return found is not None and found.owner == "worker" and found.acted_on


def worker_setting_elsewhere(place: str) -> str:
    """Why a worker setting Mirrorplane acts on is not read where it stands: MM2 reads it at `place`."""
    return f"a Kafka Connect worker setting, which MM2 reads from {place}, and so does Mirrorplane"


def held_worker_settings(configs: dict[str, dict]) -> dict[str, str]:
    """The worker settings Mirrorplane acts on, from the connectors that hold them (kind -> config), for
    export to where MM2 reads them."""
    found: dict[str, str] = {}
    for kind, config in configs.items():
        for prop, value in registry.worker_settings(config).items():
            if kind in registry.connector_kinds_of(prop):
                found.setdefault(prop, value)
    return found


def is_placeholder(value: str) -> bool:
    """A template value (`<my-cluster>`, `${file:...}`) that someone still has to fill in."""
    return bool(_PLACEHOLDER.search(value or ""))


def policy_of_class(value: str) -> str | None:
    """`...IdentityReplicationPolicy` -> identity (any package, Strimzi's included); None if unknown."""
    name = str(value).strip().rsplit(".", 1)[-1]
    return {"DefaultReplicationPolicy": "default", "IdentityReplicationPolicy": "identity",
            "LegacyReplicationPolicy": "legacy"}.get(name)


def property_text(value: Any) -> str:
    """A YAML/properties scalar as the string Kafka would read."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def mirror_name(source: str, target: str) -> str:
    """`<source>-to-<target>`, made a valid mirror name."""
    name = re.sub(r"[^a-z0-9-]+", "-", f"{source}-to-{target}".lower()).strip("-")
    return name[:63].rstrip("-") or "mirror"


class InvalidContent(ValueError):
    """The file cannot be imported: `errors` maps a path in it (or `content`) to messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {', '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass
class ClusterPlan:
    """A cluster the file defines or refers to; `fields` are ClusterSerializer fields (secrets absent)."""

    alias: str
    path: str
    fields: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)  # field -> where in the file
    defined: bool = True  # False: only referred to (by a mirror or `clusters =`), must exist already
    # Kafka Connect worker settings Mirrorplane acts on, in the cluster's config: property -> (value, path)
    worker: dict[str, tuple[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"alias": self.alias, **{k: v for k, v in self.fields.items() if k not in SECRET_FIELDS}}


@dataclass
class MirrorPlan:
    """A mirror with MirrorSerializer fields; `connectors` in the API's shape."""

    name: str
    source: str
    target: str
    path: str
    fields: dict[str, Any] = field(default_factory=dict)
    connectors: dict[str, dict] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    # Kafka Connect's offsets topic of the MM2 deployment the file describes, and the cluster holding it
    # (None: the target), where an adopting import reads MM2's committed source offsets.
    offsets_topic: str | None = None
    offsets_cluster: str | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "target": self.target, **self.fields,
                "connectors": self.connectors}


@dataclass
class ImportPlan:
    clusters: list[ClusterPlan] = field(default_factory=list)
    mirrors: list[MirrorPlan] = field(default_factory=list)
    needs_values: list[dict] = field(default_factory=list)
    unsupported: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ignored: list[dict] = field(default_factory=list)  # other resources of a multi-document file: kind, name

    def cluster(self, alias: str) -> ClusterPlan | None:
        return next((c for c in self.clusters if c.alias == alias), None)

    def need(self, cluster: str, field_name: str, secret: str | None, reason: str) -> None:
        if any(n["cluster"] == cluster and n["field"] == field_name for n in self.needs_values):
            return  # the same cluster defined again (by another resource of the file)
        self.needs_values.append({"cluster": cluster, "field": field_name, "secret": secret, "reason": reason})

    def skip(self, path: str, reason: str) -> None:
        self.unsupported.append({"path": path, "reason": reason})


def split_mirror_properties(plan: ImportPlan, connectors: dict[str, dict], paths: dict[str, str],
                            errors: dict[str, list[str]]) -> dict[str, Any]:
    """Moves the properties Mirrorplane holds once per mirror out of the connectors' configs.

    `paths[kind]` names each connector's config in the file. The connectors must agree.
    """
    found: dict[str, tuple[str, str]] = {}  # mirror field -> (value, path)
    for kind in CONNECTOR_KINDS:
        config = connectors.get(kind, {}).get("config")
        if not config:
            continue
        for prop in [p for p in config if p in MIRROR_PROPERTIES]:
            value, path = property_text(config.pop(prop)).strip(), f"{paths[kind]}.{prop}"
            target = MIRROR_PROPERTIES[prop]
            if target == "replication_policy":
                policy = policy_of_class(value)
                if policy is None:
                    errors.setdefault(path, []).append(
                        f"unsupported replication policy class {value!r}: Mirrorplane implements "
                        "DefaultReplicationPolicy, IdentityReplicationPolicy and LegacyReplicationPolicy")
                    continue
                value = policy
            if target in found and found[target][0] != value:
                errors.setdefault(path, []).append(
                    f"{value!r} differs from {found[target][0]!r} at {found[target][1]}: MM2's connectors of one "
                    "flow must agree, and Mirrorplane keeps one value per mirror")
                continue
            found.setdefault(target, (value, path))
    _move_to_source(connectors, paths, errors)
    return {target: value for target, (value, _) in found.items()}


def _move_to_source(connectors: dict[str, dict], paths: dict[str, str], errors: dict[str, list[str]]) -> None:
    """Source-held properties given on another connector join the source's config, if they agree."""
    for kind in CONNECTOR_KINDS:
        config = connectors.get(kind, {}).get("config")
        if kind == "source" or not config:
            continue
        for prop in [p for p in config if p in SOURCE_HELD_NAMES]:
            value = property_text(config.pop(prop)).strip()
            source = connectors.setdefault("source", {}).setdefault("config", {})
            if prop in source and property_text(source[prop]).strip() != value:
                errors.setdefault(f"{paths[kind]}.{prop}", []).append(
                    f"{value!r} differs from the source connector's {source[prop]!r}: MM2's connectors of one "
                    "flow must agree, and Mirrorplane keeps one value per mirror, on the source connector")
                continue
            source.setdefault(prop, value)


def apply_worker_settings(plan: ImportPlan, cluster: ClusterPlan, mirrors: list[MirrorPlan], unused: str) -> None:
    """The worker settings Mirrorplane acts on in `cluster`'s config, where MM2 reads them for the Kafka Connect
    worker running `mirrors`, go to the connectors they apply to in each; without a mirror they are listed as
    unsupported, `unused` saying why. The worker's value wins over a connector's, as in MM2."""
    for prop, (value, path) in cluster.worker.items():
        if not mirrors:
            plan.skip(path, unused)
        for mirror in mirrors:
            for kind in connector_kinds_of(prop):
                config = mirror.connectors.setdefault(kind, {}).setdefault("config", {})
                given = config.get(prop)
                if given is not None and property_text(given).strip() != value:
                    plan.warnings.append(f"{mirror.name}: the {kind} connector's {prop} {given!r} gives way to the "
                                         f"Kafka Connect worker's {value!r} at {path}, which MM2 uses")
                config[prop] = value
