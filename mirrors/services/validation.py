"""The rules a cluster's or a mirror's settings must follow, whichever way they arrive (API, form, import).

Each check returns the value it accepts, normalized, or raises `Invalid`: a message, a list of them, or
field path -> message(s), the shape the API reports them in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

from django.db.models import Field, Q

from mirrorcore import one_cluster, registry
from mirrorcore.connection import parse_bootstrap_servers
from mirrorcore.filters import PatternError, compile_patterns
from mirrorcore.overrides import refused_client_config, refused_spark_conf
from mirrorcore.policy import POLICIES
from mirrorcore.registry import invalid_properties
from mirrors.choices import ConnectorKind, SaslMechanism, SecurityProtocol
from mirrors.models import Cluster, Mirror
from mirrors.services import certificates
from mirrors.services.conflicts import Flow, conflicts
from mirrors.services.overrides import installation_policy
from mirrors.services.runtime import RESERVED_SPARK_CONF

Errors = str | list[str] | dict[str, Any]


class Invalid(ValueError):
    """Settings a rule refuses; `errors` is a message, a list of messages, or field path -> message(s)."""

    def __init__(self, errors: Errors) -> None:
        super().__init__(errors)
        self.errors = errors


# -- properties ----------------------------------------------------------------------------------
# Client properties that have their own field; setting them in `config` would be ambiguous.
RESERVED_CLIENT_PROPERTIES = {"bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.jaas.config",
                              "ssl.truststore.certificates", "ssl.keystore.key", "ssl.keystore.certificate.chain"}



def _set_on_the_mirror(prop: registry.Property) -> str:
    if prop.field in ("source", "target"):
        return f"the mirror's `{prop.field}` names it"
    choices = f" ({', '.join(POLICIES)})" if prop.field == "replication_policy" else ""
    return f"set the mirror's `{prop.field}`{choices} instead"


# Settings every connector of a flow must agree on: held once, on the mirror, so they cannot disagree.
PER_MIRROR_PROPERTIES = {prop.name: _set_on_the_mirror(prop) for prop in registry.PROPERTIES.values()
                         if prop.owner == "mirror" and prop.alias_of is None}

# Offset syncs are written by the source connector and read by the checkpoint connector.
SOURCE_ONLY_PROPERTIES = registry.source_held()


def properties(value: Any, reserved: AbstractSet[str] = frozenset()) -> dict[str, str]:
    """An object of property names to scalar values, as strings (booleans as Kafka spells them)."""
    if not isinstance(value, dict):
        raise Invalid("expected an object of property names to values")
    result = {}
    for key, item in value.items():
        if key in reserved:
            raise Invalid(f"{key!r} has its own field; set it there")
        if isinstance(item, (dict, list)) or item is None:
            raise Invalid(f"{key!r}: values must be strings, numbers or booleans")
        result[str(key)] = str(item).lower() if isinstance(item, bool) else str(item)
    return result


def cluster_config(value: Any) -> dict[str, str]:
    """A cluster's client properties, within the installation's override policy."""
    result = properties(value, RESERVED_CLIENT_PROPERTIES)
    refused = refused_client_config(result, installation_policy(), cluster=True)
    if refused:
        raise Invalid(list(refused.values()))
    return result


def connector_config(value: Any) -> dict[str, str]:
    """A connector's MM2 properties: none the mirror holds, each valid, within the override policy."""
    result = properties(value)
    held = sorted(set(result) & set(PER_MIRROR_PROPERTIES))
    if held:
        raise Invalid([f"{name}: {PER_MIRROR_PROPERTIES[name]}" for name in held])
    errors = invalid_properties(result)
    if errors:
        raise Invalid([f"{name}: {reason}" for name, reason in errors.items()])
    refused = refused_client_config(result, installation_policy())
    if refused:
        raise Invalid(list(refused.values()))
    return result


def misplaced_properties(kind: str, config: dict[str, str]) -> list[str]:
    """Messages for source-only properties set on another connector (one value per mirror)."""
    if kind == ConnectorKind.SOURCE:
        return []
    return [f"{name}: set it on the source connector; the checkpoint connector follows it (one value per mirror)"
            for name in sorted(set(config) & SOURCE_ONLY_PROPERTIES)]


# -- clusters ------------------------------------------------------------------------------------
def unchanged_alias(cluster: Cluster | None, value: str) -> str:
    if cluster is not None and value != cluster.alias:
        raise Invalid("an alias cannot change: remote topic names are derived from it")
    return value


def bootstrap_servers(value: str) -> str:
    try:
        return ",".join(parse_bootstrap_servers(value))
    except ValueError as error:
        raise Invalid(str(error)) from None


def certificates_pem(value: str) -> str:
    return _pem(value, certificates.certificates)


def private_key_pem(value: str) -> str:
    return _pem(value, certificates.private_key)


def _pem(value: str, parse: Callable[[str], Any]) -> str:
    """`value` when empty (unset) or when `parse` (a certificates check) accepts it."""
    if value:
        try:
            parse(value)
        except certificates.PemError as error:
            raise Invalid(str(error)) from None
    return value


CLUSTER_SECURITY_FIELDS = ("security_protocol", "sasl_mechanism", "username", "password", "cert_pem", "key_pem")


def cluster_security(merged: dict[str, str], sent: set[str]) -> None:
    """The security settings (`CLUSTER_SECURITY_FIELDS`, stored values merged with those `sent`) fit together."""
    protocol = merged["security_protocol"] or SecurityProtocol.PLAINTEXT
    errors = {}
    if protocol.startswith("SASL"):
        if not merged["sasl_mechanism"]:
            errors["sasl_mechanism"] = f"required with {protocol}: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"
        if not merged["username"]:
            errors["username"] = f"required with {protocol}"
        if not merged["password"]:
            errors["password"] = f"required with {protocol}"
    elif merged["sasl_mechanism"] not in ("", SaslMechanism.NONE):
        errors["sasl_mechanism"] = f"only used with SASL_PLAINTEXT or SASL_SSL, not {protocol}"
    if bool(merged["cert_pem"]) != bool(merged["key_pem"]):
        field = "key_pem" if merged["cert_pem"] else "cert_pem"
        errors[field] = "client certificate and key go together (mutual TLS)"
    if merged["cert_pem"] and not protocol.endswith("SSL"):
        errors["cert_pem"] = f"client certificates need SSL or SASL_SSL, not {protocol}"
    if merged["cert_pem"] and merged["key_pem"] and {"cert_pem", "key_pem"} & sent and not errors:
        errors |= _key_pair_errors(merged["cert_pem"], merged["key_pem"], sent)
    if errors:
        raise Invalid(errors)


def _key_pair_errors(cert_pem: str, key_pem: str, sent: set[str]) -> dict[str, str]:
    """The key must belong to the (first) client certificate; the error goes on the field just sent."""
    try:
        cert = certificates.certificates(cert_pem)[0]
    except certificates.PemError as error:  # stored before these checks, or expired since
        return {"cert_pem": f"the stored certificate cannot be used with this key: {error}"}
    try:
        key = certificates.private_key(key_pem)
    except certificates.PemError as error:
        return {"key_pem": f"the stored key cannot be used with this certificate: {error}"}
    if certificates.key_matches(cert, key):
        return {}
    return {"key_pem" if "key_pem" in sent else "cert_pem":
            f"the key does not match the client certificate ({cert.subject.rfc4514_string()}): not one key pair"}


# -- mirrors -------------------------------------------------------------------------------------
def unchanged_name(mirror: Mirror | None, value: str) -> str:
    if mirror is not None and value != mirror.name:
        raise Invalid("a mirror cannot be renamed")
    return value


def patterns(value: str) -> str:
    """Comma-separated regular expressions of topics or groups."""
    try:
        compile_patterns(value)
    except PatternError as error:
        raise Invalid(str(error)) from None
    return value


def separator(value: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise Invalid("a separator must be non-empty and without spaces")
    return value


def distinct_clusters(source: Cluster | None, target: Cluster | None) -> None:
    """Two clusters, and not two aliases of one: no bootstrap address in common (the application compares
    their cluster ids when it starts, see mirrorcore.one_cluster)."""
    if source is None or target is None:
        return
    if source == target:
        raise Invalid({"target": "source and target must be different clusters"})
    refusal = one_cluster.shared_address_refusal(source.alias, source.bootstrap_servers, target.alias,
                                                 target.bootstrap_servers)
    if refusal:
        raise Invalid({"target": refusal})


def apart_from_mirrored_clusters(cluster: Cluster | None, bootstrap: str) -> None:
    """A stored cluster's new bootstrap list shares no address with a cluster it is mirrored with."""
    if cluster is None:
        return
    mirrors = Mirror.objects.filter(Q(source=cluster) | Q(target=cluster)).select_related("source", "target")
    for mirror in mirrors:
        other = mirror.target if mirror.source_id == cluster.pk else mirror.source
        refusal = one_cluster.shared_address_refusal(mirror.source.alias, bootstrap, mirror.target.alias,
                                                     other.bootstrap_servers)
        if refusal:
            raise Invalid({"bootstrap_servers": f"mirror {mirror.name!r}: {refusal}"})


def mirror_flow(fields: dict[str, Any], mirror: Mirror | None, source: Cluster, target: Cluster) -> Flow:
    """The flow a mirror would have with `fields` set on it (`mirror`: as stored, None: a new one)."""
    def value(field: str) -> str:
        model_field = Mirror._meta.get_field(field)
        if not isinstance(model_field, Field):
            raise TypeError(f"Mirror.{field} is a relation, not a setting")
        chosen: str = fields.get(field, getattr(mirror, field, None) or model_field.default)
        return chosen

    return Flow(fields.get("name", getattr(mirror, "name", "")), source.alias, target.alias,
                value("replication_policy"), value("separator"), value("topics"), value("topics_exclude"))


def existing_flows() -> list[Flow]:
    return [Flow(m.name, m.source.alias, m.target.alias, m.replication_policy, m.separator, m.topics, m.topics_exclude)
            for m in Mirror.objects.select_related("source", "target")]


def no_conflict(flow: Flow) -> None:
    """`flow` copies no topic another mirror copies to the same remote name."""
    reasons = conflicts(flow, existing_flows())
    if reasons:
        raise Invalid({"topics": reasons})


_JVM_SIZE = re.compile(r"^[1-9][0-9]*[kmgt]?$", re.IGNORECASE)
_SPARK_MASTER = re.compile(r"^(local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|(spark|mesos|k8s)://\S+|yarn)$")
_SPARK_INTEGERS = ("driver_cores", "executor_cores", "total_executor_cores", "num_executors")
_YARN_QUEUE = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")
SPARK_KEYS = ("master", "queue", "driver_memory", "executor_memory", *_SPARK_INTEGERS, "conf")


def spark_resources(value: Any) -> dict:
    """A mirror's `spark`: where its application runs and with what resources (spark-submit options)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid("expected an object with keys among " + ", ".join(SPARK_KEYS))
    errors: dict[str, str] = {}
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key not in SPARK_KEYS:
            errors[key] = f"unknown key {key!r}: use {', '.join(SPARK_KEYS)}"
        elif item is None or item == "":
            continue  # unset: the default applies
        elif key == "master":
            if not isinstance(item, str) or not _SPARK_MASTER.match(item.strip()):
                errors[key] = "a Spark master URL such as spark://host:7077 or local[2]"
            else:
                result[key] = item.strip()
        elif key == "queue":
            if not isinstance(item, str) or not _YARN_QUEUE.match(item.strip()):
                errors[key] = "a YARN queue name such as default or root.mirrors"
            else:
                result[key] = item.strip()
        elif key in ("driver_memory", "executor_memory"):
            if not isinstance(item, str) or not _JVM_SIZE.match(item.strip()):
                errors[key] = "a JVM memory size such as 512m or 2g"
            else:
                result[key] = item.strip().lower()
        elif key in _SPARK_INTEGERS:
            if isinstance(item, bool) or not isinstance(item, int) or item < 1:
                errors[key] = "a positive integer"
            else:
                result[key] = item
        else:  # conf
            result[key] = _spark_conf(item, errors)
    if errors:
        raise Invalid(errors)
    return result


def _spark_conf(value: Any, errors: dict) -> dict[str, str]:
    if not isinstance(value, dict):
        errors["conf"] = "expected an object of spark.* property names to values"
        return {}
    result = {}
    for key, item in value.items():
        if not key.startswith("spark.") or any(ch.isspace() or ch == "=" for ch in key):
            errors[f"conf.{key}"] = "only spark.* properties, without spaces or '='"
        elif key in RESERVED_SPARK_CONF:  # the runtime owns the command line
            errors[f"conf.{key}"] = "set by the control plane (use `master` for the master)"
        elif isinstance(item, (dict, list)) or item is None:
            errors[f"conf.{key}"] = "values must be strings, numbers or booleans"
        else:
            result[key] = str(item).lower() if isinstance(item, bool) else str(item)
    for key, reason in refused_spark_conf(result, installation_policy()).items():
        errors[f"conf.{key}"] = reason
    return result
