"""MM2 `connect-mirror-maker.properties` files to and from import plans.

Precedence is MM2's: `A->B.x` over top-level `x`, and `A.x` over top-level client settings. A flow
exists when `A->B.enabled = true`. Its mirror is `<A>-to-<B>` unless `A->B.mirrorplane.name` names it.
What MM2 properties cannot say per connector (state, auto restart, a property on a connector it does
not belong to) is written as `A->B.mirrorplane.<kind>.<setting>`, which MM2 passes over.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import javaproperties

from mirrors.interchange.plan import (
    CONNECT_WORKER_REASON,
    CONNECTOR_KINDS,
    DEDICATED_OFFSETS_TOPIC,
    MIRROR_PROPERTIES,
    POLICY_CLASSES,
    ClusterPlan,
    ImportPlan,
    InvalidContent,
    MirrorPlan,
    apply_worker_settings,
    connector_kinds_of,
    held_worker_settings,
    is_connect_worker_property,
    is_kept_worker_setting,
    is_placeholder,
    mirror_name,
    split_mirror_properties,
    worker_setting_elsewhere,
)

_LINE_END = re.compile(r"\r\n|\r|\n")  # java.util.Properties' line terminators
_FLOW = re.compile(r"^([^.\s]+?)->([^.\s]+)\.(.+)$")
_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_EXTENSION = re.compile(r"^mirrorplane\.(source|checkpoint|heartbeat)\.(state|tasks\.max|auto\.restart\.enabled|"
                        r"auto\.restart\.max\.restarts|config\.(.+))$")
_CLIENT_TOP_LEVEL = ("security.protocol", "sasl.", "ssl.")
_SECRET_DIR = "/etc/mirrorplane/secrets"  # noqa: S105 (a directory, not a password)


@dataclass(frozen=True)
class Entry:
    key: str
    value: str
    line: int


def read(text: str) -> list[Entry]:
    """The entries of a java.util.Properties file (read by javaproperties), with trimmed values and the
    line each starts on. A malformed `\\u` escape (not four hexadecimal digits) is InvalidContent naming its line."""
    entries: list[Entry] = []
    line = 1
    elements = javaproperties.parse(text.replace("\u00a0", " "))
    while True:
        try:
            element = next(elements)
        except StopIteration:
            return entries
        except javaproperties.InvalidUEscapeError as error:
            raise InvalidContent({f"line {line}": [f"invalid escape {error.escape}: \\u takes four hexadecimal "
                                                   "digits"]}) from None
        if isinstance(element, javaproperties.KeyValue):
            entries.append(Entry(element.key, element.value.strip(), line))
        line += len(_LINE_END.findall(element.source))


def parse(text: str) -> ImportPlan:
    entries = read(text)
    if not entries:
        raise InvalidContent({"content": ["no properties found"]})
    values = {entry.key: entry for entry in entries}  # the last occurrence wins, as in java.util.Properties
    if "clusters" not in values:
        raise InvalidContent({"content": ["no `clusters` property: list the cluster aliases (clusters = A, B)"]})
    aliases = [a.strip() for a in values["clusters"].value.split(",") if a.strip()]
    plan, errors = ImportPlan(), {}
    where = {key: f"line {entry.line}: {key}" for key, entry in values.items()}
    top: dict[str, str] = {}
    cluster_props: dict[str, dict[str, str]] = {alias: {} for alias in aliases}
    flow_props: dict[tuple[str, str], dict[str, str]] = {}
    for key, entry in values.items():
        if key == "clusters":
            continue
        flow = _FLOW.match(key)
        head = key.split(".", 1)
        if flow:
            source, target, prop = flow.groups()
            if source in aliases and target in aliases:
                flow_props.setdefault((source, target), {})[prop] = entry.value
            elif prop == "enabled" and entry.value.lower() == "true":
                unknown = [a for a in (source, target) if a not in aliases]
                errors[where[key]] = [f"unknown cluster alias {unknown[0]!r}: not in clusters = {', '.join(aliases)}"]
            else:
                plan.skip(where[key], f"a property of flow {source}->{target}, which is not between clusters "
                          f"{', '.join(aliases)}")
        elif len(head) == 2 and head[0] in aliases:
            cluster_props[head[0]][head[1]] = entry.value
        else:
            top[key] = entry.value
    client_defaults = {k: v for k, v in top.items() if k.startswith(_CLIENT_TOP_LEVEL)}
    for alias in aliases:
        props = client_defaults | cluster_props[alias]
        _cluster(plan, alias, props, {p: where.get(f"{alias}.{p}", where.get(p, "")) for p in props})
    flow_defaults = {k: v for k, v in top.items() if k not in client_defaults}
    flows = [f for f, props in flow_props.items() if props.get("enabled", "false").lower() == "true"]
    if not flows:
        plan.warnings.append("no flow is enabled (A->B.enabled = true): no mirror to create")
        for key in flow_defaults:
            plan.skip(where[key], "applies to flows, and none is enabled")
    for source, target in flows:
        props = flow_defaults | flow_props[(source, target)]
        paths = {p: where.get(f"{source}->{target}.{p}", where.get(p, "")) for p in props}
        _mirror(plan, source, target, props, paths, errors)
        # As MM2's worker of the flow: the top-level setting wins over the target cluster's.
        plan.mirrors[-1].offsets_topic = (top.get("offset.storage.topic") or cluster_props[target].get(
            "offset.storage.topic") or DEDICATED_OFFSETS_TOPIC.format(source=source))
    for (source, target), props in flow_props.items():
        if (source, target) not in flows:
            for prop in props:
                if prop != "enabled":
                    plan.skip(where[f"{source}->{target}.{prop}"], f"flow {source}->{target} is not enabled")
    for cluster in plan.clusters:  # MM2's worker of a flow reads the target cluster's properties
        apply_worker_settings(plan, cluster, [m for m in plan.mirrors if m.target == cluster.alias],
                              f"a Kafka Connect worker setting of the flows into {cluster.alias}, and none is enabled")
    if errors:
        raise InvalidContent(errors)
    return plan


def _cluster(plan: ImportPlan, alias: str, props: dict[str, str], where: dict[str, str]) -> None:
    cluster = ClusterPlan(alias=alias, path=f"clusters ({alias})", paths={"alias": "clusters"})
    plan.clusters.append(cluster)
    fields: dict[str, Any] = {}
    config = {}
    for prop, value in props.items():
        path = where[prop]
        if prop == "bootstrap.servers":
            if is_placeholder(value):
                plan.need(alias, "bootstrap_servers", value, f"{path}: a placeholder, not an address")
            else:
                fields["bootstrap_servers"] = value
            cluster.paths["bootstrap_servers"] = path
        elif prop == "security.protocol":
            fields["security_protocol"] = value.upper()
            cluster.paths["security_protocol"] = path
        elif prop == "sasl.mechanism":
            fields["sasl_mechanism"] = value
            cluster.paths["sasl_mechanism"] = path
        elif prop == "sasl.jaas.config":
            _jaas(plan, alias, value, path, fields)
            cluster.paths["username"] = cluster.paths["password"] = path
        elif prop in ("ssl.truststore.location", "ssl.keystore.location"):
            if prop == "ssl.truststore.location":
                plan.need(alias, "ca_pem", value, f"{path}: the CA certificates, as PEM")
            else:
                plan.need(alias, "cert_pem", value, f"{path}: the client certificate, as PEM")
                plan.need(alias, "key_pem", value, f"{path}: the client private key, as PEM")
        elif prop in ("ssl.truststore.type", "ssl.keystore.type") and value.upper() == "PEM":
            continue  # Mirrorplane's certificates are PEM
        elif prop in ("ssl.truststore.certificates", "ssl.keystore.certificate.chain", "ssl.keystore.key"):
            target = {"ssl.truststore.certificates": "ca_pem", "ssl.keystore.certificate.chain": "cert_pem",
                      "ssl.keystore.key": "key_pem"}[prop]
            if is_placeholder(value):
                plan.need(alias, target, value, path)
            else:
                fields[target] = value.replace("\\n", "\n")
        elif prop.startswith("ssl.") and ("password" in prop or prop.endswith(".type")):
            plan.skip(path, "Mirrorplane takes PEM certificates and keys (see needs_values), not key stores")
        elif is_kept_worker_setting(prop):
            cluster.worker[prop] = (value, path)
        elif is_connect_worker_property(prop):
            plan.skip(path, CONNECT_WORKER_REASON)
        else:
            config[prop] = value
    if "bootstrap_servers" not in fields and not any(
            n["cluster"] == alias and n["field"] == "bootstrap_servers" for n in plan.needs_values):
        cluster.defined = False
        plan.warnings.append(f"{alias}.bootstrap.servers is not set: an existing cluster {alias!r} is used")
    if config:
        fields["config"] = config
    cluster.fields = fields


def _jaas(plan: ImportPlan, alias: str, value: str, path: str, fields: dict) -> None:
    options = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _JAAS.findall(value)}
    if "username" not in options:
        plan.skip(path, "only PlainLoginModule/ScramLoginModule with username and password are supported")
        return
    fields["username"] = options["username"]
    password = options.get("password", "")
    if password and not is_placeholder(password):
        fields["password"] = password
    else:
        plan.need(alias, "password", password or None, f"{path}: the password")


def _mirror(plan: ImportPlan, source: str, target: str, props: dict[str, str], where: dict[str, str],
            errors: dict) -> None:
    flow = f"{source}->{target}"
    mirror = MirrorPlan(name=mirror_name(source, target), source=source, target=target, path=flow,
                        paths={"source": where.get("enabled", flow), "target": where.get("enabled", flow)})
    connectors: dict[str, dict] = {kind: {"config": {}} for kind in CONNECTOR_KINDS}
    for prop, value in props.items():
        path = where[prop]
        extension = _EXTENSION.match(prop)
        if prop == "enabled":
            continue
        if prop == "mirrorplane.name":
            mirror.name, mirror.paths["name"] = value, path
        elif prop == "mirrorplane.spark":
            try:
                mirror.fields["spark"] = json.loads(value)
            except ValueError:
                errors[path] = ["expected a JSON object of spark resources"]
            mirror.paths["spark"] = path
        elif extension:
            _extension(connectors[extension.group(1)], extension.group(2), extension.group(3), value)
        elif prop == "tasks.max":
            for kind in ("source", "checkpoint"):
                connectors[kind].setdefault("tasks_max", value)
        elif is_kept_worker_setting(prop):
            plan.skip(path, worker_setting_elsewhere(f"the target cluster's properties ({target}.{prop})"))
        elif is_connect_worker_property(prop):
            plan.skip(path, CONNECT_WORKER_REASON)
        elif prop in MIRROR_PROPERTIES:
            connectors["source"]["config"][prop] = value
        else:
            for kind in connector_kinds_of(prop):
                connectors[kind]["config"].setdefault(prop, value)
    config_paths = dict.fromkeys(CONNECTOR_KINDS, flow)
    mirror.fields |= split_mirror_properties(plan, connectors, config_paths, errors)
    for prop, field_name in MIRROR_PROPERTIES.items():
        if prop in where:
            mirror.paths[field_name] = where[prop]
    mirror.connectors = {kind: spec for kind, spec in connectors.items() if spec != {"config": {}}}
    plan.mirrors.append(mirror)


def _extension(spec: dict, setting: str, prop: str | None, value: str) -> None:
    if prop:
        spec["config"][prop] = value
    elif setting == "state":
        spec["state"] = value
    elif setting == "tasks.max":
        spec["tasks_max"] = value
    elif setting == "auto.restart.enabled":
        spec.setdefault("auto_restart", {})["enabled"] = value
    else:
        spec.setdefault("auto_restart", {})["max_restarts"] = None if value in ("", "none") else value


# -- export --------------------------------------------------------------------------------
Line = str | tuple[str, str]  # a comment or blank line, or a property


def render(mirror) -> str:
    """An MM2 properties file for one mirror; secrets appear as `${file:...}` placeholders."""
    source, target = mirror.source, mirror.target
    flow = f"{source.alias}->{target.alias}"
    lines: list[Line] = [
        f"# Mirror {mirror.name} exported by Mirrorplane as MM2 properties (connect-mirror-maker.properties).",
        f"# Secrets are placeholders: put them in the files under {_SECRET_DIR}/ or fill them in.",
        ("clusters", f"{source.alias}, {target.alias}"), ""]
    connectors = {c.kind: c for c in mirror.connectors.all()}
    # Kafka Connect worker settings go where MM2's worker of the flow reads them: the target's properties.
    worker = held_worker_settings({kind: c.config for kind, c in connectors.items()})
    for cluster in (source, target):
        lines += [*_render_cluster(cluster), *((f"{target.alias}.{k}", v) for k, v in worker.items()
                                               if cluster is target), ""]
    lines += [(f"{flow}.enabled", "true"), (f"{flow}.mirrorplane.name", mirror.name),
              (f"{flow}.topics", mirror.topics), (f"{flow}.topics.exclude", mirror.topics_exclude),
              (f"{flow}.groups", mirror.groups), (f"{flow}.groups.exclude", mirror.groups_exclude),
              (f"{flow}.replication.policy.class", POLICY_CLASSES[mirror.replication_policy]),
              (f"{flow}.replication.policy.separator", mirror.separator)]
    if mirror.spark:
        lines.append((f"{flow}.mirrorplane.spark", json.dumps(mirror.spark, sort_keys=True)))
    lines += [(f"{flow}.{key}", value) for key, value in _render_connectors(connectors, set(worker))]
    return "".join(_line(line) + "\n" for line in lines)


def _line(line: Line) -> str:
    """A property escaped as java.util.Properties.store writes it (non-ASCII as `\\u` and four hexadecimal
    digits); comments as they are."""
    if isinstance(line, str):
        return line
    key, value = line
    return javaproperties.join_key_value(key, str(value), separator=" = ")


def _render_cluster(cluster) -> list[tuple[str, str]]:
    alias = cluster.alias
    lines = [(f"{alias}.bootstrap.servers", cluster.bootstrap_servers),
             (f"{alias}.security.protocol", cluster.security_protocol)]
    if cluster.security_protocol.startswith("SASL"):
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if cluster.sasl_mechanism == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
        username = cluster.username.replace("\\", "\\\\").replace('"', '\\"')
        lines += [(f"{alias}.sasl.mechanism", cluster.sasl_mechanism),
                  (f"{alias}.sasl.jaas.config", f'{module} required username="{username}" '
                   f'password="${{file:{_SECRET_DIR}/{alias}.properties:password}}";')]
    if cluster.ca_pem:
        lines += [(f"{alias}.ssl.truststore.type", "PEM"),
                  (f"{alias}.ssl.truststore.location", f"{_SECRET_DIR}/{alias}-ca.pem")]
    if cluster.cert_pem:
        lines += [(f"{alias}.ssl.keystore.type", "PEM"),
                  (f"{alias}.ssl.keystore.location", f"{_SECRET_DIR}/{alias}-user.pem")]
    lines += [(f"{alias}.{key}", str(value)) for key, value in sorted(cluster.config.items())]
    return lines


def _render_connectors(connectors: dict, worker: set[str]) -> list[tuple[str, str]]:
    """The connectors' settings; `worker`: the worker settings written with the target cluster instead."""
    lines = []
    source, checkpoint = connectors["source"], connectors["checkpoint"]
    if source.tasks_max == checkpoint.tasks_max:
        lines.append(("tasks.max", str(source.tasks_max)))
    written = {"source": source.tasks_max == checkpoint.tasks_max, "checkpoint": source.tasks_max ==
               checkpoint.tasks_max, "heartbeat": connectors["heartbeat"].tasks_max == 1}
    plain: dict[str, str] = {}
    claimed: dict[str, set[str]] = {kind: {p for p in worker if kind in connector_kinds_of(p)}
                                    for kind in CONNECTOR_KINDS}
    props = sorted({p for c in connectors.values() for p in c.config} - worker)
    for prop in props:
        kinds = connector_kinds_of(prop)
        values = {connectors[k].config.get(prop) for k in kinds}
        others = [k for k in CONNECTOR_KINDS if k not in kinds and prop in connectors[k].config]
        if len(values) == 1 and None not in values and not others:
            plain[prop] = str(values.pop())
            for kind in kinds:
                claimed[kind].add(prop)
    lines += list(plain.items())
    for kind in CONNECTOR_KINDS:
        connector, prefix = connectors[kind], f"mirrorplane.{kind}."
        if not written[kind]:
            lines.append((f"{prefix}tasks.max", str(connector.tasks_max)))
        if connector.desired_state != "running":
            lines.append((f"{prefix}state", connector.desired_state))
        if not connector.auto_restart_enabled:
            lines.append((f"{prefix}auto.restart.enabled", "false"))
        if connector.max_restarts is not None:
            lines.append((f"{prefix}auto.restart.max.restarts", str(connector.max_restarts)))
        lines += [(f"{prefix}config.{p}", str(v)) for p, v in sorted(connector.config.items())
                  if p not in claimed[kind]]
    return lines
