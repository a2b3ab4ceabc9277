"""Strimzi `KafkaMirrorMaker2` resources (kafka.strimzi.io, v1beta2 and older) to and from import plans.

Mirror names: a resource with one mirror names it after `metadata.name`; with several, each is
`<source>-to-<target>`. Connectors a mirror leaves out are created stopped (Strimzi deploys only
those listed); a connector without `autoRestart` does not restart itself (Strimzi's default).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from mirrors.interchange.plan import (
    CONNECT_WORKER_REASON,
    POLICY_CLASSES,
    ClusterPlan,
    ImportPlan,
    InvalidContent,
    MirrorPlan,
    is_connect_worker_property,
    mirror_name,
    property_text,
    split_mirror_properties,
)

KIND = "KafkaMirrorMaker2"
API_GROUP = "kafka.strimzi.io"
API_VERSION = f"{API_GROUP}/v1beta2"
SPARK_ANNOTATION = "mirrorplane.io/spark"
_DEPLOYMENT_REASON = "a Kafka Connect deployment setting: Mirrorplane runs each mirror as a Spark application"
_CONNECTOR_KEYS = {"source": "sourceConnector", "checkpoint": "checkpointConnector", "heartbeat": "heartbeatConnector"}
_PATTERNS = {"topicsPattern": "topics", "topicsExcludePattern": "topics_exclude",
             "topicsBlacklistPattern": "topics_exclude", "groupsPattern": "groups",
             "groupsExcludePattern": "groups_exclude", "groupsBlacklistPattern": "groups_exclude"}
_SASL = {"scram-sha-512": "SCRAM-SHA-512", "scram-sha-256": "SCRAM-SHA-256", "plain": "PLAIN"}
# Strimzi manages these itself; in Mirrorplane they have their own cluster fields.
_MANAGED_PREFIXES = ("ssl.", "sasl.", "security.", "bootstrap.servers")


def load(text: str) -> dict:
    """The resource as a mapping; InvalidContent naming the line when it is not a KafkaMirrorMaker2."""
    try:
        document = yaml.safe_load(text.replace("\u00a0", " "))  # web pages paste non-breaking spaces
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise InvalidContent({"content": [f"{where}invalid YAML: {problem}"]}) from None
    if not isinstance(document, dict):
        raise InvalidContent({"content": ["expected a YAML mapping (a Kubernetes resource)"]})
    errors = {}
    if document.get("kind") != KIND:
        errors["kind"] = [f"expected {KIND}, got {document.get('kind')!r}"]
    if not str(document.get("apiVersion", "")).startswith(f"{API_GROUP}/"):
        errors["apiVersion"] = [f"expected {API_VERSION}, got {document.get('apiVersion')!r}"]
    if errors:
        raise InvalidContent(errors)
    if not isinstance(document.get("spec"), dict):
        raise InvalidContent({"spec": ["expected a mapping with clusters and mirrors"]})
    return document


def parse(text: str) -> ImportPlan:
    document = load(text)
    plan, errors = ImportPlan(), {}
    if document["apiVersion"] != API_VERSION:
        plan.warnings.append(f"apiVersion {document['apiVersion']} read as {API_VERSION}")
    metadata = document.get("metadata") or {}
    spark = _metadata(plan, metadata, errors)
    spec = document["spec"]
    for key in spec:
        if key not in ("clusters", "mirrors"):
            plan.skip(f"spec.{key}", _spec_reason(key))
    for index, item in enumerate(_list(spec, "clusters", errors)):
        _cluster(plan, item, f"spec.clusters[{index}]", errors)
    mirrors = _list(spec, "mirrors", errors)
    if not mirrors:
        plan.warnings.append("spec.mirrors is empty: no mirror to create")
    for index, item in enumerate(mirrors):
        path = f"spec.mirrors[{index}]"
        single_name = metadata.get("name") if len(mirrors) == 1 else None
        _mirror(plan, item, path, single_name, spark, errors)
    if errors:
        raise InvalidContent(errors)
    return plan


def _metadata(plan: ImportPlan, metadata: Any, errors: dict) -> dict:
    spark = {}
    for key, value in (metadata.items() if isinstance(metadata, dict) else ()):
        if key == "name":
            continue
        if key == "annotations" and isinstance(value, dict) and SPARK_ANNOTATION in value:
            try:
                spark = json.loads(value[SPARK_ANNOTATION])
            except (TypeError, ValueError):
                errors[f"metadata.annotations.{SPARK_ANNOTATION}"] = ["expected a JSON object of spark resources"]
            for other in value:
                if other != SPARK_ANNOTATION:
                    plan.skip(f"metadata.annotations.{other}", "Kubernetes metadata")
            continue
        plan.skip(f"metadata.{key}", "Kubernetes metadata")
    return spark


def _spec_reason(key: str) -> str:
    if key in ("sourceConnector", "checkpointConnector", "heartbeatConnector"):
        return f"connectors are configured per mirror: spec.mirrors[].{key}"
    return _DEPLOYMENT_REASON


def _list(spec: dict, key: str, errors: dict) -> list:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        errors[f"spec.{key}"] = ["expected a list of mappings"]
        return []
    return value


def _cluster(plan: ImportPlan, item: dict, path: str, errors: dict) -> None:
    alias = str(item.get("alias") or "")
    if not alias:
        errors[f"{path}.alias"] = ["required"]
        return
    if plan.cluster(alias):
        errors[f"{path}.alias"] = [f"cluster {alias!r} is defined twice"]
        return
    cluster = ClusterPlan(alias=alias, path=path, paths={"alias": f"{path}.alias"})
    plan.clusters.append(cluster)
    tls = item.get("tls")
    fields: dict[str, Any] = {}
    if "bootstrapServers" in item:
        fields["bootstrap_servers"] = str(item["bootstrapServers"])
        cluster.paths["bootstrap_servers"] = f"{path}.bootstrapServers"
    else:
        cluster.defined = False
        plan.warnings.append(f"{path} has no bootstrapServers: an existing cluster {alias!r} is used")
    if tls is not None:
        _trusted_certificates(plan, alias, tls, f"{path}.tls")
    protocol = "SSL" if tls is not None else "PLAINTEXT"
    auth = item.get("authentication")
    if isinstance(auth, dict):
        protocol = _authentication(plan, alias, auth, f"{path}.authentication", fields, protocol, cluster.paths)
    elif auth is not None:
        errors[f"{path}.authentication"] = ["expected a mapping"]
    if "bootstrapServers" in item:
        fields["security_protocol"] = protocol
        cluster.paths["security_protocol"] = f"{path}.tls"
    config = {}
    for key, value in (item.get("config") or {}).items():
        key_path = f"{path}.config.{key}"
        if is_connect_worker_property(key):
            plan.skip(key_path, CONNECT_WORKER_REASON)
        elif key.startswith(_MANAGED_PREFIXES):
            plan.skip(key_path, "set with tls/authentication (Mirrorplane keeps it in its own cluster field)")
        else:
            config[key] = property_text(value)
    if config:
        fields["config"] = config
        cluster.paths["config"] = f"{path}.config"
    cluster.fields = fields
    for key in item:
        if key not in ("alias", "bootstrapServers", "tls", "authentication", "config"):
            plan.skip(f"{path}.{key}", "not a setting Mirrorplane has")


def _trusted_certificates(plan: ImportPlan, alias: str, tls: Any, path: str) -> None:
    certificates = tls.get("trustedCertificates") if isinstance(tls, dict) else None
    refs = []
    for entry in certificates or []:
        if isinstance(entry, dict):
            name = entry.get("certificate") or entry.get("pattern") or "*"
            refs.append(f"{entry.get('secretName', '<no secretName>')}/{name}")
    if refs:
        plan.need(alias, "ca_pem", ", ".join(refs), f"{path}.trustedCertificates: the CA certificates (PEM)")
    for key in (tls if isinstance(tls, dict) else {}):
        if key != "trustedCertificates":
            plan.skip(f"{path}.{key}", "not a setting of tls")


def _authentication(plan: ImportPlan, alias: str, auth: dict, path: str, fields: dict, protocol: str,
                    paths: dict) -> str:
    kind = str(auth.get("type", "")).lower()
    known = {"type"}
    if kind == "tls":
        secret = auth.get("certificateAndKey") or {}
        known.add("certificateAndKey")
        name = secret.get("secretName", "<no secretName>")
        plan.need(alias, "cert_pem", f"{name}/{secret.get('certificate', 'tls.crt')}", f"{path}: client certificate")
        plan.need(alias, "key_pem", f"{name}/{secret.get('key', 'tls.key')}", f"{path}: client private key")
        protocol = "SSL"
    elif kind in _SASL:
        known |= {"username", "passwordSecret"}
        fields["sasl_mechanism"] = _SASL[kind]
        fields["username"] = str(auth.get("username", ""))
        paths |= {"sasl_mechanism": f"{path}.type", "username": f"{path}.username"}
        secret = auth.get("passwordSecret") or {}
        plan.need(alias, "password", f"{secret.get('secretName', '<no secretName>')}/{secret.get('password', '')}",
                  f"{path}.passwordSecret")
        protocol = "SASL_SSL" if protocol == "SSL" else "SASL_PLAINTEXT"
    else:
        plan.skip(f"{path}.type", f"authentication type {kind!r} is not supported (tls, scram-sha-256, "
                  "scram-sha-512 and plain are)")
        return protocol
    for key in auth:
        if key not in known:
            plan.skip(f"{path}.{key}", f"not a setting of {kind} authentication")
    return protocol


def _mirror(plan: ImportPlan, item: dict, path: str, name: str | None, spark: dict, errors: dict) -> None:
    source, target = str(item.get("sourceCluster") or ""), str(item.get("targetCluster") or "")
    for key, alias in (("sourceCluster", source), ("targetCluster", target)):
        if not alias:
            errors[f"{path}.{key}"] = ["required"]
        elif plan.cluster(alias) is None:
            plan.clusters.append(ClusterPlan(alias=alias, path=f"{path}.{key}", defined=False,
                                             paths={"alias": f"{path}.{key}"}))
    if not source or not target:
        return
    mirror = MirrorPlan(name=_clean_name(name) if name else mirror_name(source, target), source=source,
                        target=target, path=path,
                        paths={"source": f"{path}.sourceCluster", "target": f"{path}.targetCluster",
                               "name": "metadata.name" if name else path})
    for key, field_name in _PATTERNS.items():
        if key in item:
            mirror.fields[field_name] = property_text(item[key])
            mirror.paths[field_name] = f"{path}.{key}"
    if spark:
        mirror.fields["spark"] = spark
        mirror.paths["spark"] = f"metadata.annotations.{SPARK_ANNOTATION}"
    config_paths = {}
    for kind, key in _CONNECTOR_KEYS.items():
        config_paths[kind] = f"{path}.{key}.config"
        mirror.connectors[kind] = _connector(plan, item.get(key), f"{path}.{key}", errors)
        mirror.paths[f"connectors.{kind}"] = f"{path}.{key}"
        if key not in item:
            plan.warnings.append(f"{path}.{key} is absent: the {kind} connector is created stopped")
    mirror.fields |= split_mirror_properties(plan, mirror.connectors, config_paths, errors)
    for key in item:
        if key not in ("sourceCluster", "targetCluster", *_PATTERNS, *_CONNECTOR_KEYS.values()):
            plan.skip(f"{path}.{key}", "not a setting of a mirror")
    plan.mirrors.append(mirror)


def _clean_name(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", str(name).lower()).strip("-")[:63].rstrip("-")
    return cleaned or "mirror"


def _connector(plan: ImportPlan, spec: Any, path: str, errors: dict) -> dict:
    if spec is None:
        return {"state": "stopped", "auto_restart": {"enabled": False}}
    if not isinstance(spec, dict):
        errors[path] = ["expected a mapping"]
        return {}
    result: dict[str, Any] = {"auto_restart": {"enabled": False}}
    for key, value in spec.items():
        if key == "tasksMax":
            result["tasks_max"] = value
        elif key == "state":
            result["state"] = value
        elif key == "pause":
            if value is True and "state" not in spec:
                result["state"] = "paused"
            plan.warnings.append(f"{path}.pause is deprecated in Strimzi: read as state")
        elif key == "autoRestart" and isinstance(value, dict):
            result["auto_restart"] = {"enabled": bool(value.get("enabled", False))}
            if "maxRestarts" in value:
                result["auto_restart"]["max_restarts"] = value["maxRestarts"]
            for other in value:
                if other not in ("enabled", "maxRestarts"):
                    plan.skip(f"{path}.autoRestart.{other}", "not a setting of autoRestart")
        elif key == "config" and isinstance(value, dict):
            config = {}
            for prop, item in value.items():
                if prop in ("tasks.max", "connector.class", "name", "source.cluster.alias", "target.cluster.alias"):
                    plan.skip(f"{path}.config.{prop}", "set by Mirrorplane from the mirror (use tasksMax for tasks)")
                else:
                    config[str(prop)] = property_text(item) if not isinstance(item, (dict, list)) else item
            result["config"] = config
        else:
            plan.skip(f"{path}.{key}", "not a setting of a connector")
    return result


# -- export --------------------------------------------------------------------------------
CHECKPOINT_ALIGNED = {"offset-syncs.topic.location", "replication.policy.internal.topic.separator.enabled"}


def render(mirror) -> str:
    """A KafkaMirrorMaker2 resource for one mirror; secrets appear as Kubernetes secret references."""
    clusters = [_render_cluster(mirror.source), _render_cluster(mirror.target)]
    item: dict[str, Any] = {"sourceCluster": mirror.source.alias, "targetCluster": mirror.target.alias,
                            "topicsPattern": mirror.topics, "topicsExcludePattern": mirror.topics_exclude,
                            "groupsPattern": mirror.groups, "groupsExcludePattern": mirror.groups_exclude}
    policy = {"replication.policy.class": POLICY_CLASSES[mirror.replication_policy]}
    if mirror.separator != ".":
        policy["replication.policy.separator"] = mirror.separator
    source_config = next((c.config for c in mirror.connectors.all() if c.kind == "source"), {})
    # MM2 reads these on the checkpoint connector too: written on both, as MM2 users expect.
    aligned = {k: v for k, v in source_config.items() if k in CHECKPOINT_ALIGNED}
    for connector in mirror.connectors.all():
        rendered = _render_connector(connector, policy | aligned if connector.kind == "checkpoint" else policy)
        if rendered is not None:
            item[_CONNECTOR_KEYS[connector.kind]] = rendered
    metadata: dict[str, Any] = {"name": mirror.name}
    if mirror.spark:
        metadata["annotations"] = {SPARK_ANNOTATION: json.dumps(mirror.spark, sort_keys=True)}
    resource = {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata,
                "spec": {"connectCluster": mirror.target.alias, "clusters": clusters, "mirrors": [item]}}
    header = (f"# Mirror {mirror.name} exported by Mirrorplane. Secrets are references to Kubernetes secrets,\n"
              "# never their values.\n")
    return header + yaml.safe_dump(resource, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _render_cluster(cluster) -> dict:
    result: dict[str, Any] = {"alias": cluster.alias, "bootstrapServers": cluster.bootstrap_servers}
    protocol = cluster.security_protocol
    if protocol.endswith("SSL"):
        result["tls"] = {"trustedCertificates": [{"secretName": f"{cluster.alias}-cluster-ca-cert",
                                                   "certificate": "ca.crt"}]} if cluster.ca_pem else {}
    if protocol.startswith("SASL"):
        result["authentication"] = {
            "type": {v: k for k, v in _SASL.items()}[cluster.sasl_mechanism], "username": cluster.username,
            "passwordSecret": {"secretName": f"{cluster.alias}-credentials", "password": "password"}}
    elif cluster.cert_pem:
        result["authentication"] = {"type": "tls", "certificateAndKey": {
            "secretName": f"{cluster.alias}-user", "certificate": "user.crt", "key": "user.key"}}
    if cluster.config:
        result["config"] = dict(cluster.config)
    return result


def _render_connector(connector, policy: dict) -> dict | None:
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
    result["config"] = {**policy, **connector.config}
    return result

