"""What both shapes of KafkaMirrorMaker2 share: cluster specs, tls, authentication, connectors, mirrors.

`strict` is the `spec.target` shape (kafka.strimzi.io/v1): an authentication Mirrorplane cannot run is a
400 there, where the older `spec.clusters` shape lists it as unsupported and imports the rest.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mirrors.interchange.plan import (
    CONNECT_WORKER_REASON,
    ClusterPlan,
    ImportPlan,
    MirrorPlan,
    is_connect_worker_property,
    is_kept_worker_setting,
    mirror_name,
    property_text,
    split_mirror_properties,
)

SPARK_ANNOTATION = "mirrorplane.io/spark"
HEARTBEAT_ANNOTATION = "mirrorplane.io/heartbeat-connector"
ANNOTATIONS = {SPARK_ANNOTATION: "a JSON object of spark resources",
               HEARTBEAT_ANNOTATION: "a JSON object: the heartbeat connector (tasksMax, state, autoRestart, config)"}
DEPLOYMENT_REASON = "a Kafka Connect deployment setting: Mirrorplane runs each mirror as a Spark application"
PATTERNS = {"topicsPattern": "topics", "topicsExcludePattern": "topics_exclude", "groupsPattern": "groups",
            "groupsExcludePattern": "groups_exclude"}
SASL = {"scram-sha-512": "SCRAM-SHA-512", "scram-sha-256": "SCRAM-SHA-256", "plain": "PLAIN"}
_SUPPORTED_AUTH = "tls, scram-sha-256, scram-sha-512 and plain"
_UNRUNNABLE_AUTH = {
    "oauth": "OAuth needs Strimzi's OAuth login and callback classes in the client, which Mirrorplane does not run "
             "(and kafka.strimzi.io/v1 no longer has type oauth)",
    "custom": "custom authentication passes arbitrary client properties (login modules, callback handler classes) "
              "and files mounted into Strimzi's pods, which Mirrorplane cannot reproduce",
}
# Strimzi manages these itself; in Mirrorplane they have their own cluster fields.
_MANAGED_PREFIXES = ("ssl.", "sasl.", "security.", "bootstrap.servers")
_SET_BY_MIRRORPLANE = ("tasks.max", "connector.class", "name", "source.cluster.alias", "target.cluster.alias")
_CONNECTOR_FIELDS = {"tasks_max": "tasksMax", "state": "state", "auto_restart": "autoRestart"}  # API -> Strimzi
_CONNECTOR_SKIPS = {
    "version": "the connector plugin's version: Mirrorplane runs its own implementation of the connector",
    "listOffsets": "a Strimzi offset operation through a ConfigMap, not a setting of the mirror",
    "alterOffsets": "a Strimzi offset operation through a ConfigMap, not a setting of the mirror",
}


def read_annotations(plan: ImportPlan, metadata: Any, root: str, errors: dict, known: tuple[str, ...]) -> dict:
    """The known Mirrorplane annotations, parsed; other metadata is listed as unsupported."""
    found: dict[str, Any] = {}
    for key, value in (metadata.items() if isinstance(metadata, dict) else ()):
        if key == "name":
            continue
        if key == "annotations" and isinstance(value, dict) and any(k in value for k in known):
            for name, text in value.items():
                if name not in known:
                    plan.skip(f"{root}metadata.annotations.{name}", "Kubernetes metadata")
                    continue
                try:
                    found[name] = json.loads(text)
                except (TypeError, ValueError):
                    found[name] = None
                if not isinstance(found[name], dict):
                    errors[f"{root}metadata.annotations.{name}"] = [f"expected {ANNOTATIONS[name]}"]
                    found[name] = {}
            continue
        plan.skip(f"{root}metadata.{key}", "Kubernetes metadata")
    return found


def mapping(value: Any, path: str, errors: dict) -> dict:
    """`value` if it is a mapping, {} if absent; anything else is an error at `path`."""
    if value is None or isinstance(value, dict):
        return value or {}
    errors[path] = [f"expected a mapping, got {type(value).__name__}"]
    return {}


def read_list(spec: dict, key: str, path: str, errors: dict) -> list:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        errors[path] = ["expected a list of mappings"]
        return []
    return value


def read_cluster(plan: ImportPlan, item: dict, path: str, errors: dict, *, strict: bool = False,
                 extra: dict[str, str] | None = None) -> ClusterPlan | None:
    """A cluster spec (alias, bootstrapServers, tls, authentication, config); `extra` keys are listed as skipped."""
    alias = str(item.get("alias") or "")
    if not alias:
        errors[f"{path}.alias"] = ["required"]
        return None
    cluster = ClusterPlan(alias=alias, path=path, paths={"alias": f"{path}.alias"})
    fields: dict[str, Any] = {}
    if "bootstrapServers" in item:
        fields["bootstrap_servers"] = str(item["bootstrapServers"])
        cluster.paths["bootstrap_servers"] = f"{path}.bootstrapServers"
    elif strict:
        errors[f"{path}.bootstrapServers"] = ["required: the cluster's host:port list"]
        return None
    else:
        cluster.defined = False
        plan.warnings.append(f"{path} has no bootstrapServers: an existing cluster {alias!r} is used")
    tls = item.get("tls")
    if tls is not None:
        _trusted_certificates(plan, alias, tls, f"{path}.tls", errors)
    protocol = "SSL" if tls is not None else "PLAINTEXT"
    auth = item.get("authentication")
    if isinstance(auth, dict):
        protocol = _authentication(plan, alias, auth, f"{path}.authentication", fields, protocol, cluster.paths,
                                   errors, strict)
    elif auth is not None:
        errors[f"{path}.authentication"] = ["expected a mapping"]
    if "bootstrapServers" in item:
        fields["security_protocol"] = protocol
        cluster.paths["security_protocol"] = f"{path}.tls"
    config = {}
    for key, value in mapping(item.get("config"), f"{path}.config", errors).items():
        key_path = f"{path}.config.{key}"
        if is_kept_worker_setting(key):  # where Strimzi's Connect cluster is, its worker's (see the shapes)
            cluster.worker[key] = (property_text(value), key_path)
        elif is_connect_worker_property(key):
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
        if key in (extra or {}):
            plan.skip(f"{path}.{key}", (extra or {})[key])
        elif key not in ("alias", "bootstrapServers", "tls", "authentication", "config"):
            plan.skip(f"{path}.{key}", "not a setting Mirrorplane has")
    return cluster


def add_cluster(plan: ImportPlan, cluster: ClusterPlan, errors: dict, *, again_ok: bool) -> None:
    """Adds a defined cluster; one defined again must agree (`again_ok`), one only referred to is replaced."""
    existing = plan.cluster(cluster.alias)
    if existing is None:
        plan.clusters.append(cluster)
    elif not existing.defined:
        plan.clusters[plan.clusters.index(existing)] = cluster
    elif not again_ok:
        errors[f"{cluster.path}.alias"] = [f"cluster {cluster.alias!r} is defined twice"]
    elif existing.fields != cluster.fields:
        errors[f"{cluster.path}.alias"] = [
            f"cluster {cluster.alias!r} is defined again with other settings than at {existing.path}"]


def refer_to_cluster(plan: ImportPlan, alias: str, path: str) -> None:
    """A cluster a mirror names without defining: it must exist already."""
    if plan.cluster(alias) is None:
        plan.clusters.append(ClusterPlan(alias=alias, path=path, defined=False, paths={"alias": path}))


def _trusted_certificates(plan: ImportPlan, alias: str, tls: Any, path: str, errors: dict) -> None:
    certificates = tls.get("trustedCertificates") if isinstance(tls, dict) else None
    if certificates is not None and not isinstance(certificates, list):
        errors[f"{path}.trustedCertificates"] = ["expected a list of {secretName, certificate or pattern}"]
        return
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
                    paths: dict, errors: dict, strict: bool) -> str:
    """The security protocol; `strict`: a type Mirrorplane cannot run is an error, else it is skipped."""
    kind = str(auth.get("type", "")).lower()
    known = {"type"}
    if kind == "tls":
        secret = mapping(auth.get("certificateAndKey"), f"{path}.certificateAndKey", errors)
        known.add("certificateAndKey")
        name = secret.get("secretName", "<no secretName>")
        plan.need(alias, "cert_pem", f"{name}/{secret.get('certificate', 'tls.crt')}", f"{path}: client certificate")
        plan.need(alias, "key_pem", f"{name}/{secret.get('key', 'tls.key')}", f"{path}: client private key")
        protocol = "SSL"
    elif kind in SASL:
        known |= {"username", "passwordSecret"}
        fields["sasl_mechanism"] = SASL[kind]
        fields["username"] = str(auth.get("username", ""))
        paths |= {"sasl_mechanism": f"{path}.type", "username": f"{path}.username"}
        secret = mapping(auth.get("passwordSecret"), f"{path}.passwordSecret", errors)
        plan.need(alias, "password", f"{secret.get('secretName', '<no secretName>')}/{secret.get('password', '')}",
                  f"{path}.passwordSecret")
        protocol = "SASL_SSL" if protocol == "SSL" else "SASL_PLAINTEXT"
    elif strict:
        why = _UNRUNNABLE_AUTH.get(kind, f"unknown authentication type {auth.get('type')!r}")
        errors[f"{path}.type"] = [f"{why}: Mirrorplane supports {_SUPPORTED_AUTH}"]
        return protocol
    else:
        plan.skip(f"{path}.type", f"authentication type {kind!r} is not supported ({_SUPPORTED_AUTH} are)")
        return protocol
    for key in auth:
        if key not in known:
            plan.skip(f"{path}.{key}", f"not a setting of {kind} authentication")
    return protocol


def read_mirror(plan: ImportPlan, item: dict, path: str, *, root: str, name: str | None,
                ends: dict[str, tuple[str, str]], connectors: dict[str, tuple[Any, str, bool]],
                patterns: dict[str, str], known: tuple[str, ...], annotations: dict, errors: dict) -> None:
    """A mirror of `ends` ({"source"/"target": (alias, path)}) with its filters and connectors.

    `connectors` says where each connector's spec is: kind -> (spec or None, path, warn when absent).
    """
    (source, source_path), (target, target_path) = ends["source"], ends["target"]
    mirror = MirrorPlan(name=clean_name(name) if name else mirror_name(source, target), source=source,
                        target=target, path=path,
                        paths={"source": source_path, "target": target_path,
                               "name": f"{root}metadata.name" if name else path})
    for key, field_name in patterns.items():
        if key in item:
            mirror.fields[field_name] = property_text(item[key])
            mirror.paths[field_name] = f"{path}.{key}"
    spark = annotations.get(SPARK_ANNOTATION)
    if spark:
        mirror.fields["spark"] = spark
        mirror.paths["spark"] = f"{root}metadata.annotations.{SPARK_ANNOTATION}"
    config_paths = {}
    for kind, (spec, spec_path, warn) in connectors.items():
        config_paths[kind] = f"{spec_path}.config"
        mirror.connectors[kind] = read_connector(plan, spec, spec_path, errors)
        mirror.paths[f"connectors.{kind}"] = spec_path
        mirror.paths |= {f"connectors.{kind}.{name}": f"{spec_path}.{key}" for name, key in _CONNECTOR_FIELDS.items()}
        if spec is None and warn:
            plan.warnings.append(f"{spec_path} is absent: the {kind} connector is created stopped")
    mirror.fields |= split_mirror_properties(plan, mirror.connectors, config_paths, errors)
    for key in item:
        if key not in (*known, *patterns):
            plan.skip(f"{path}.{key}", "not a setting of a mirror")
    plan.mirrors.append(mirror)


def clean_name(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", str(name).lower()).strip("-")[:63].rstrip("-")
    return cleaned or "mirror"


def read_connector(plan: ImportPlan, spec: Any, path: str, errors: dict) -> dict:
    """A connector spec (tasksMax, state, autoRestart, config) in the API's shape; absent: stopped."""
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
                if prop in _SET_BY_MIRRORPLANE:
                    plan.skip(f"{path}.config.{prop}", "set by Mirrorplane from the mirror (use tasksMax for tasks)")
                else:
                    config[str(prop)] = property_text(item) if not isinstance(item, (dict, list)) else item
            result["config"] = config
        else:
            plan.skip(f"{path}.{key}", _CONNECTOR_SKIPS.get(key, "not a setting of a connector"))
    return result
