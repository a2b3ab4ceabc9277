"""One mirror as a KafkaMirrorMaker2 resource: kafka.strimzi.io/v1 (`spec.target`) or v1beta2 (`spec.clusters`).

Secrets appear as references to Kubernetes secrets, never their values. kafka.strimzi.io/v1 has no heartbeat
connector: a heartbeat connector that does something is written as the `mirrorplane.io/heartbeat-connector`
annotation, which the import reads back.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from mirrorcore import registry
from mirrors.interchange.plan import CONNECTOR_KINDS, POLICY_CLASSES, connector_kinds_of, held_worker_settings
from mirrors.interchange.strimzi import common, legacy, v1
from mirrors.interchange.strimzi.documents import API_GROUP, KIND

VERSIONS = ("v1", "v1beta2")
# MM2 reads these on the checkpoint connector too: written on both, as MM2 users expect.
CHECKPOINT_ALIGNED = {prop.name for prop in registry.PROPERTIES.values() if "checkpoint" in prop.aligned_on}


def render(mirror, version: str = "v1") -> str:
    """The mirror as a resource of that apiVersion (`v1` or `v1beta2`), with a header comment."""
    # Kafka Connect worker settings go to the Connect cluster's config (the target), where Strimzi reads them.
    worker = held_worker_settings({c.kind: c.config for c in mirror.connectors.all()})
    connectors = _connectors(mirror, worker)
    metadata: dict[str, Any] = {"name": mirror.name}
    annotations = {}
    if mirror.spark:
        annotations[common.SPARK_ANNOTATION] = json.dumps(mirror.spark, sort_keys=True)
    item: dict[str, Any] = {}
    if version == "v1beta2":
        item |= {"sourceCluster": mirror.source.alias, "targetCluster": mirror.target.alias, **_patterns(mirror)}
        item |= {legacy.CONNECTOR_KEYS[kind]: spec for kind, spec in connectors.items()}
        spec: dict[str, Any] = {"connectCluster": mirror.target.alias,
                                "clusters": [_cluster(mirror.source), _cluster(mirror.target, worker)],
                                "mirrors": [item]}
    else:
        item["source"] = _cluster(mirror.source)
        item |= {v1.CONNECTOR_KEYS[kind]: spec for kind, spec in connectors.items() if kind != "heartbeat"}
        item |= _patterns(mirror)
        if "heartbeat" in connectors:
            annotations[common.HEARTBEAT_ANNOTATION] = json.dumps(connectors["heartbeat"], sort_keys=True)
        spec = {"replicas": 1, "target": _target(mirror, worker), "mirrors": [item]}
    if annotations:
        metadata["annotations"] = annotations
    resource = {"apiVersion": f"{API_GROUP}/{version}", "kind": KIND, "metadata": metadata, "spec": spec}
    header = (f"# Mirror {mirror.name} exported by Mirrorplane as {API_GROUP}/{version}. Secrets are references\n"
              "# to Kubernetes secrets, never their values.\n")
    return header + yaml.safe_dump(resource, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _patterns(mirror) -> dict[str, str]:
    return {"topicsPattern": mirror.topics, "topicsExcludePattern": mirror.topics_exclude,
            "groupsPattern": mirror.groups, "groupsExcludePattern": mirror.groups_exclude}


def _connectors(mirror, worker: dict[str, str]) -> dict[str, dict]:
    """kind -> connector spec, for the connectors that are not idle (stopped with nothing set); `worker`: the
    worker settings written with the Connect cluster instead."""
    policy = {"replication.policy.class": POLICY_CLASSES[mirror.replication_policy]}
    if mirror.separator != ".":
        policy["replication.policy.separator"] = mirror.separator
    source_config: dict[str, str] = next((c.config for c in mirror.connectors.all() if c.kind == "source"), {})
    aligned = {k: v for k, v in source_config.items() if k in CHECKPOINT_ALIGNED}
    result = {}
    for connector in sorted(mirror.connectors.all(), key=lambda c: CONNECTOR_KINDS.index(c.kind)):
        rendered = _connector(connector, policy | aligned if connector.kind == "checkpoint" else policy,
                              {p for p in worker if connector.kind in connector_kinds_of(p)})
        if rendered is not None:
            result[connector.kind] = rendered
    return result


def _target(mirror, worker: dict[str, str]) -> dict:
    """The target cluster with the Kafka Connect group and topics kafka.strimzi.io/v1 requires."""
    cluster = _cluster(mirror.target, worker)
    connect = {"groupId": f"{mirror.name}-group", "configStorageTopic": f"__{mirror.name}-config",
               "offsetStorageTopic": f"__{mirror.name}-offset", "statusStorageTopic": f"__{mirror.name}-status"}
    head = {key: cluster.pop(key) for key in ("alias", "bootstrapServers")}
    return {**head, **connect, **cluster}


def _cluster(cluster, worker: dict[str, str] | None = None) -> dict:
    """A cluster spec; `worker`: Kafka Connect worker settings, for the Connect cluster's config."""
    result: dict[str, Any] = {"alias": cluster.alias, "bootstrapServers": cluster.bootstrap_servers}
    protocol = cluster.security_protocol
    if protocol.endswith("SSL"):
        result["tls"] = {"trustedCertificates": [{"secretName": f"{cluster.alias}-cluster-ca-cert",
                                                   "certificate": "ca.crt"}]} if cluster.ca_pem else {}
    if protocol.startswith("SASL"):
        result["authentication"] = {
            "type": {v: k for k, v in common.SASL.items()}[cluster.sasl_mechanism], "username": cluster.username,
            "passwordSecret": {"secretName": f"{cluster.alias}-credentials", "password": "password"}}
    elif cluster.cert_pem:
        result["authentication"] = {"type": "tls", "certificateAndKey": {
            "secretName": f"{cluster.alias}-user", "certificate": "user.crt", "key": "user.key"}}
    if cluster.config or worker:
        result["config"] = dict(cluster.config) | (worker or {})
    return result


def _connector(connector, policy: dict, omitted: set[str]) -> dict | None:
    idle = (connector.desired_state == "stopped" and connector.tasks_max == 1 and not connector.config
            and not connector.auto_restart_enabled and connector.max_restarts is None)
    if idle:
        return None
    result: dict[str, Any] = {"tasksMax": connector.tasks_max}
    if connector.auto_restart_enabled or connector.max_restarts is not None:
        result["autoRestart"] = {"enabled": connector.auto_restart_enabled}
        if connector.max_restarts is not None:
            result["autoRestart"]["maxRestarts"] = connector.max_restarts
    if connector.desired_state != "running":
        result["state"] = connector.desired_state
    result["config"] = {**policy, **{k: v for k, v in connector.config.items() if k not in omitted}}
    return result
