"""The `spec.clusters` shape of KafkaMirrorMaker2 (kafka.strimzi.io/v1beta2 and older).

Clusters are listed once in `spec.clusters`; each mirror names its `sourceCluster` and `targetCluster` by alias
and may have a `heartbeatConnector`.
"""

from __future__ import annotations

from mirrors.interchange.plan import (
    STRIMZI_OFFSETS_TOPIC,
    ClusterPlan,
    ImportPlan,
    apply_worker_settings,
    worker_setting_elsewhere,
)
from mirrors.interchange.strimzi import common
from mirrors.interchange.strimzi.documents import Resource

VERSION = "v1beta2"
CONNECTOR_KEYS = {"source": "sourceConnector", "checkpoint": "checkpointConnector", "heartbeat": "heartbeatConnector"}
PATTERNS = {**common.PATTERNS, "topicsBlacklistPattern": "topics_exclude", "groupsBlacklistPattern": "groups_exclude"}


def parse_into(plan: ImportPlan, resource: Resource, errors: dict) -> None:
    """Adds the resource's clusters and mirrors to the plan; problems go to `errors` keyed by path."""
    root, document = resource.root, resource.body
    if resource.version != VERSION:
        plan.warnings.append(f"apiVersion {resource.api_version} read as kafka.strimzi.io/{VERSION}")
    metadata = common.mapping(document.get("metadata"), f"{root}metadata", errors)
    annotations = common.read_annotations(plan, metadata, root, errors, (common.SPARK_ANNOTATION,))
    spec = document["spec"]
    for key in spec:
        if key not in ("clusters", "mirrors"):
            plan.skip(f"{root}spec.{key}", _spec_reason(key))
    defined_here: set[str] = set()
    read: list[ClusterPlan] = []
    for index, item in enumerate(common.read_list(spec, "clusters", f"{root}spec.clusters", errors)):
        cluster = common.read_cluster(plan, item, f"{root}spec.clusters[{index}]", errors)
        if cluster is not None:
            common.add_cluster(plan, cluster, errors, again_ok=cluster.alias not in defined_here)
            defined_here.add(cluster.alias)
            read.append(cluster)
    mirrors = common.read_list(spec, "mirrors", f"{root}spec.mirrors", errors)
    if not mirrors:
        plan.warnings.append(f"{root}spec.mirrors is empty: no mirror to create")
    count = len(plan.mirrors)
    for index, item in enumerate(mirrors):
        single_name = metadata.get("name") if len(mirrors) == 1 else None
        _mirror(plan, item, f"{root}spec.mirrors[{index}]", root, single_name, annotations, errors)
    _offsets_storage(plan.mirrors[count:], spec)
    # Strimzi's Connect worker takes its settings from the connectCluster's config, for every mirror.
    connect = str(spec.get("connectCluster") or "")
    for cluster in read:
        if cluster.alias == connect:
            apply_worker_settings(plan, cluster, plan.mirrors[count:], "a Kafka Connect worker setting of the "
                                  "resource's mirrors, and it has none")
        else:
            apply_worker_settings(plan, cluster, [], worker_setting_elsewhere("the connectCluster's config"))


def _offsets_storage(mirrors: list, spec: dict) -> None:
    """Kafka Connect's offsets topic: the `offset.storage.topic` of the `connectCluster`'s config."""
    connect = str(spec.get("connectCluster") or "")
    listed = spec.get("clusters")
    clusters = listed if isinstance(listed, list) else []
    config = next((c.get("config") for c in clusters if isinstance(c, dict) and c.get("alias") == connect), None)
    topic = (config or {}).get("offset.storage.topic") if isinstance(config, dict) else None
    for mirror in mirrors:
        mirror.offsets_topic = str(topic or STRIMZI_OFFSETS_TOPIC)
        mirror.offsets_cluster = connect or None


def _spec_reason(key: str) -> str:
    if key in CONNECTOR_KEYS.values():
        return f"connectors are configured per mirror: spec.mirrors[].{key}"
    return common.DEPLOYMENT_REASON


def _mirror(plan: ImportPlan, item: dict, path: str, root: str, name: str | None, annotations: dict,
            errors: dict) -> None:
    source, target = str(item.get("sourceCluster") or ""), str(item.get("targetCluster") or "")
    for key, alias in (("sourceCluster", source), ("targetCluster", target)):
        if not alias:
            errors[f"{path}.{key}"] = ["required"]
        else:
            common.refer_to_cluster(plan, alias, f"{path}.{key}")
    if not source or not target:
        return
    connectors = {kind: (item.get(key), f"{path}.{key}", True) for kind, key in CONNECTOR_KEYS.items()}
    common.read_mirror(plan, item, path, root=root, name=name,
                       ends={"source": (source, f"{path}.sourceCluster"), "target": (target, f"{path}.targetCluster")},
                       connectors=connectors, patterns=PATTERNS,
                       known=("sourceCluster", "targetCluster", *CONNECTOR_KEYS.values()), annotations=annotations,
                       errors=errors)
