"""The `spec.target` shape of KafkaMirrorMaker2: kafka.strimzi.io/v1 (and v1beta2 since Strimzi 0.49).

`spec.target` is the target cluster, which is also where Kafka Connect keeps its group and internal topics;
each `spec.mirrors[]` defines its own `source` cluster. kafka.strimzi.io/v1 has no heartbeat connector: the
mirror's heartbeat connector is created stopped unless the `mirrorplane.io/heartbeat-connector` annotation
(written by Mirrorplane's export) configures it.
"""

from __future__ import annotations

from mirrors.interchange.plan import (
    CONNECT_WORKER_REASON,
    STRIMZI_OFFSETS_TOPIC,
    ClusterPlan,
    ImportPlan,
    apply_worker_settings,
    worker_setting_elsewhere,
)
from mirrors.interchange.strimzi import common
from mirrors.interchange.strimzi.documents import Resource

CONNECTOR_KEYS = {"source": "sourceConnector", "checkpoint": "checkpointConnector"}
# Fields of KafkaMirrorMaker2Spec (v1) that configure Strimzi's deployment, not the mirrors.
DEPLOYMENT_KEYS = ("version", "replicas", "image", "resources", "livenessProbe", "readinessProbe", "jvmOptions",
                   "jmxOptions", "logging", "clientRackInitImage", "rack", "metricsConfig", "tracing", "template")
TARGET_KEYS = dict.fromkeys(("groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"),
                            CONNECT_WORKER_REASON)
_CLUSTERS_SHAPE = {
    "clusters": "spec.target and spec.mirrors[].source",
    "connectCluster": "spec.target (the target is the Connect cluster)",
    "sourceCluster": "spec.mirrors[].source (a cluster: alias, bootstrapServers, tls, authentication, config)",
    "targetCluster": "spec.target",
}


def parse_into(plan: ImportPlan, resource: Resource, errors: dict) -> None:
    """Adds the resource's clusters and mirrors to the plan; problems go to `errors` keyed by path."""
    root, document, version = resource.root, resource.body, resource.api_version
    metadata = common.mapping(document.get("metadata"), f"{root}metadata", errors)
    annotations = common.read_annotations(plan, metadata, root, errors,
                                          (common.SPARK_ANNOTATION, common.HEARTBEAT_ANNOTATION))
    spec = document["spec"]
    for key in spec:
        if key in _CLUSTERS_SHAPE:
            errors[f"{root}spec.{key}"] = [_clusters_shape(key, version)]
        elif key in DEPLOYMENT_KEYS:
            plan.skip(f"{root}spec.{key}", common.DEPLOYMENT_REASON)
        elif key not in ("target", "mirrors"):
            plan.skip(f"{root}spec.{key}", f"not a field of KafkaMirrorMaker2 {version}")
    target_cluster = _target(plan, spec.get("target"), f"{root}spec.target", errors)
    target = target_cluster.alias if target_cluster is not None else None
    mirrors = common.read_list(spec, "mirrors", f"{root}spec.mirrors", errors)
    if "mirrors" not in spec:
        errors[f"{root}spec.mirrors"] = ["required: a list of mirrors, each with its source cluster"]
    elif not mirrors:
        plan.warnings.append(f"{root}spec.mirrors is empty: no mirror to create")
    count = len(plan.mirrors)
    sources: list[ClusterPlan] = []
    for index, item in enumerate(mirrors):
        single_name = metadata.get("name") if len(mirrors) == 1 else None
        sources += _mirror(plan, resource, item, index, target, single_name, annotations, errors)
    target_spec = spec.get("target") if isinstance(spec.get("target"), dict) else {}
    for mirror in plan.mirrors[count:]:
        mirror.offsets_topic = str(target_spec.get("offsetStorageTopic") or STRIMZI_OFFSETS_TOPIC)
    # The target is the Connect cluster: its config holds the worker's settings, for every mirror.
    if target_cluster is not None:
        apply_worker_settings(plan, target_cluster, plan.mirrors[count:], "a Kafka Connect worker setting of the "
                              "resource's mirrors, and it has none")
    for source in sources:
        apply_worker_settings(plan, source, [], worker_setting_elsewhere("the Connect cluster's config (spec.target)"))


def _clusters_shape(key: str, version: str) -> str:
    return (f"{key} belongs to the spec.clusters shape (kafka.strimzi.io/v1beta2); a {version} resource with "
            f"spec.target names its clusters in {_CLUSTERS_SHAPE[key]}")


def _target(plan: ImportPlan, item: object, path: str, errors: dict) -> ClusterPlan | None:
    if not isinstance(item, dict):
        errors[path] = ["required: the target cluster (alias, bootstrapServers, groupId, storage topics, ...)"]
        return None
    cluster = common.read_cluster(plan, item, path, errors, strict=True, extra=TARGET_KEYS)
    if cluster is None:
        return None
    common.add_cluster(plan, cluster, errors, again_ok=True)
    return cluster


def _mirror(plan: ImportPlan, resource: Resource, item: dict, index: int, target: str | None, name: str | None,
            annotations: dict, errors: dict) -> list[ClusterPlan]:
    """Adds the mirror; returns its source cluster as read (none if it could not be)."""
    path = f"{resource.root}spec.mirrors[{index}]"
    for key in ("sourceCluster", "targetCluster"):
        if key in item:
            errors[f"{path}.{key}"] = [_clusters_shape(key, resource.api_version)]
    source_spec = item.get("source")
    if not isinstance(source_spec, dict):
        errors[f"{path}.source"] = ["required: the source cluster (alias, bootstrapServers, tls, authentication, "
                                    "config)"]
        return []
    source = common.read_cluster(plan, source_spec, f"{path}.source", errors, strict=True)
    if source is None or target is None:
        return [source] if source is not None else []
    common.add_cluster(plan, source, errors, again_ok=True)
    connectors = {kind: (item.get(key), f"{path}.{key}", True) for kind, key in CONNECTOR_KEYS.items()}
    heartbeat = annotations.get(common.HEARTBEAT_ANNOTATION)
    heartbeat_path = f"{resource.root}metadata.annotations.{common.HEARTBEAT_ANNOTATION}"
    if resource.version == "v1beta2" and "heartbeatConnector" in item:
        heartbeat, heartbeat_path = item["heartbeatConnector"], f"{path}.heartbeatConnector"
    connectors["heartbeat"] = (heartbeat, heartbeat_path, False)
    known = ("source", "sourceCluster", "targetCluster", *CONNECTOR_KEYS.values())
    if resource.version == "v1beta2":
        known += ("heartbeatConnector",)
    ends = {"source": (source.alias, f"{path}.source.alias"), "target": (target, f"{resource.root}spec.target.alias")}
    common.read_mirror(plan, item, path, root=resource.root, name=name, ends=ends,
                       connectors=connectors, patterns=common.PATTERNS, known=known, annotations=annotations,
                       errors=errors)
    return [source]
