from __future__ import annotations

import re
from typing import Any

from rest_framework import serializers

from mirrors.choices import ConnectorKind, DesiredState, SaslMechanism, SecurityProtocol
from mirrors.choices import ReplicationPolicy as ReplicationPolicyChoice
from mirrors.models import Cluster, Connector, Mirror
from mirrors.services import certificates
from mirrors.services.conflicts import Flow, conflicts
from mirrors.services.mirrors import create_mirror, update_mirror
from mirrors.services.overrides import installation_policy
from spark_runtime.connection import parse_bootstrap_servers
from spark_runtime.filters import PatternError, compile_patterns
from spark_runtime.overrides import refused_client_config, refused_spark_conf
from spark_runtime.properties import invalid_properties
from spark_runtime.series import SERIES

# Client properties that have their own field; setting them in `config` would be ambiguous.
_RESERVED_CLIENT_PROPERTIES = {"bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.jaas.config",
                               "ssl.truststore.certificates", "ssl.keystore.key", "ssl.keystore.certificate.chain"}


def _validate_properties(value: Any, reserved: set[str] = frozenset()) -> dict[str, str]:
    if not isinstance(value, dict):
        raise serializers.ValidationError("expected an object of property names to values")
    result = {}
    for key, item in value.items():
        if key in reserved:
            raise serializers.ValidationError(f"{key!r} has its own field; set it there")
        if isinstance(item, (dict, list)) or item is None:
            raise serializers.ValidationError(f"{key!r}: values must be strings, numbers or booleans")
        result[str(key)] = str(item).lower() if isinstance(item, bool) else str(item)
    return result


class ClusterSerializer(serializers.ModelSerializer):
    password = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=False,
                                     style={"input_type": "password"})
    key_pem = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=False)
    has_password = serializers.SerializerMethodField()
    has_key = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["alias", "bootstrap_servers", "security_protocol", "sasl_mechanism", "username", "password",
                  "has_password", "ca_pem", "cert_pem", "key_pem", "has_key", "config", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]

    def get_has_password(self, cluster: Cluster) -> bool:
        return bool(cluster.password)

    def get_has_key(self, cluster: Cluster) -> bool:
        return bool(cluster.key_pem)

    def validate_alias(self, value: str) -> str:
        if self.instance is not None and value != self.instance.alias:
            raise serializers.ValidationError("an alias cannot change: remote topic names are derived from it")
        return value

    def validate_bootstrap_servers(self, value: str) -> str:
        try:
            return ",".join(parse_bootstrap_servers(value))
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None

    def validate_config(self, value: Any) -> dict[str, str]:
        properties = _validate_properties(value, _RESERVED_CLIENT_PROPERTIES)
        refused = refused_client_config(properties, installation_policy(), cluster=True)
        if refused:
            raise serializers.ValidationError(list(refused.values()))
        return properties

    def validate_ca_pem(self, value: str) -> str:
        return _pem(value, certificates.certificates)

    def validate_cert_pem(self, value: str) -> str:
        return _pem(value, certificates.certificates)

    def validate_key_pem(self, value: str) -> str:
        return _pem(value, certificates.private_key)

    def validate(self, attrs: dict) -> dict:
        merged = {f: attrs.get(f, getattr(self.instance, f, "")) for f in
                  ("security_protocol", "sasl_mechanism", "username", "password", "cert_pem", "key_pem")}
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
        if merged["cert_pem"] and merged["key_pem"] and {"cert_pem", "key_pem"} & set(attrs) and not errors:
            errors |= _key_pair_errors(merged["cert_pem"], merged["key_pem"], set(attrs))
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


def _pem(value: str, parse: Any) -> str:
    """`value` when empty (unset) or when `parse` (a certificates check) accepts it."""
    if value:
        try:
            parse(value)
        except certificates.PemError as error:
            raise serializers.ValidationError(str(error)) from None
    return value


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


# Settings every connector of a flow must agree on: held once, on the mirror, so they cannot disagree.
PER_MIRROR_PROPERTIES = {
    "replication.policy.class": "set the mirror's `replication_policy` (default, identity, legacy) instead",
    "replication.policy.separator": "set the mirror's `separator` instead",
    "topics": "set the mirror's `topics` instead",
    "topics.exclude": "set the mirror's `topics_exclude` instead",
    "groups": "set the mirror's `groups` instead",
    "groups.exclude": "set the mirror's `groups_exclude` instead",
    "source.cluster.alias": "the mirror's `source` names it",
    "target.cluster.alias": "the mirror's `target` names it",
}

# Offset syncs are written by the source connector and read by the checkpoint connector.
SOURCE_ONLY_PROPERTIES = {"offset-syncs.topic.location", "emit.offset-syncs.enabled", "offset.lag.max",
                          "replication.policy.internal.topic.separator.enabled"}


class _KnownKeysOnly(serializers.Serializer):
    """Refuses keys it does not know (a misplaced `max_restarts` was silently ignored), naming them."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: f"unknown key: use {', '.join(self.fields)}" for key in unknown})
        return super().to_internal_value(data)


class AutoRestartSerializer(_KnownKeysOnly):
    enabled = serializers.BooleanField(required=False)
    max_restarts = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class ConnectorSpecSerializer(_KnownKeysOnly):
    tasks_max = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    state = serializers.ChoiceField(choices=DesiredState.choices, required=False)
    auto_restart = AutoRestartSerializer(required=False)
    config = serializers.DictField(required=False)

    def validate_config(self, value: Any) -> dict[str, str]:
        properties = _validate_properties(value)
        held = sorted(set(properties) & set(PER_MIRROR_PROPERTIES))
        if held:
            raise serializers.ValidationError([f"{name}: {PER_MIRROR_PROPERTIES[name]}" for name in held])
        errors = invalid_properties(properties)
        if errors:
            raise serializers.ValidationError([f"{name}: {reason}" for name, reason in errors.items()])
        refused = refused_client_config(properties, installation_policy())
        if refused:
            raise serializers.ValidationError(list(refused.values()))
        return properties


class ConnectorsField(serializers.Field):
    """`{"source": {...}, "checkpoint": {...}, "heartbeat": {...}}`, each key optional."""

    def to_representation(self, mirror: Mirror) -> dict:
        return {c.kind: _connector_spec(c) for c in mirror.connectors.all()}

    def get_attribute(self, instance: Mirror) -> Mirror:
        return instance

    def to_internal_value(self, data: Any) -> dict:
        if not isinstance(data, dict):
            raise serializers.ValidationError("expected an object keyed by connector kind")
        unknown = sorted(set(data) - set(ConnectorKind.values))
        if unknown:
            raise serializers.ValidationError(f"unknown connector kind(s) {unknown}: use {ConnectorKind.values}")
        result, errors = {}, {}
        for kind, spec in data.items():
            serializer = ConnectorSpecSerializer(data=spec)
            if serializer.is_valid():
                result[kind] = serializer.validated_data
                misplaced = sorted(set(result[kind].get("config", {})) & SOURCE_ONLY_PROPERTIES)
                if kind != ConnectorKind.SOURCE and misplaced:
                    errors[kind] = {"config": [f"{name}: set it on the source connector; the checkpoint connector "
                                               "follows it (one value per mirror)" for name in misplaced]}
            else:
                errors[kind] = serializer.errors
        if errors:
            raise serializers.ValidationError(errors)
        return result


def _connector_spec(connector: Connector) -> dict:
    return {
        "tasks_max": connector.tasks_max,
        "state": connector.desired_state,
        "auto_restart": {"enabled": connector.auto_restart_enabled, "max_restarts": connector.max_restarts},
        "config": connector.config,
    }


class ClusterAliasField(serializers.SlugRelatedField):
    default_error_messages = {"does_not_exist": "unknown cluster alias {value!r}",
                              "invalid": "expected a cluster alias"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="alias", queryset=Cluster.objects.all(), **kwargs)

    def fail(self, key: str, **kwargs: Any) -> None:
        if key == "does_not_exist":
            kwargs["value"] = str(kwargs.get("value"))
        super().fail(key, **kwargs)


_JVM_SIZE = re.compile(r"^[1-9][0-9]*[kmgt]?$", re.IGNORECASE)
_SPARK_MASTER = re.compile(r"^(local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|(spark|mesos|k8s)://\S+|yarn)$")
_SPARK_INTEGERS = ("driver_cores", "executor_cores", "total_executor_cores", "num_executors")
_YARN_QUEUE = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")
SPARK_KEYS = ("master", "queue", "driver_memory", "executor_memory", *_SPARK_INTEGERS, "conf")


def validate_spark_resources(value: Any) -> dict:
    """A mirror's `spark`: where its application runs and with what resources (spark-submit options)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise serializers.ValidationError("expected an object with keys among " + ", ".join(SPARK_KEYS))
    errors, result = {}, {}
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
        raise serializers.ValidationError(errors)
    return result


def _spark_conf(value: Any, errors: dict) -> dict[str, str]:
    from mirrors.services.runtime import RESERVED_SPARK_CONF  # the runtime owns the command line

    if not isinstance(value, dict):
        errors["conf"] = "expected an object of spark.* property names to values"
        return {}
    result = {}
    for key, item in value.items():
        if not key.startswith("spark.") or any(ch.isspace() or ch == "=" for ch in key):
            errors[f"conf.{key}"] = "only spark.* properties, without spaces or '='"
        elif key in RESERVED_SPARK_CONF:
            errors[f"conf.{key}"] = "set by the control plane (use `master` for the master)"
        elif isinstance(item, (dict, list)) or item is None:
            errors[f"conf.{key}"] = "values must be strings, numbers or booleans"
        else:
            result[key] = str(item).lower() if isinstance(item, bool) else str(item)
    for key, reason in refused_spark_conf(result, installation_policy()).items():
        errors[f"conf.{key}"] = reason
    return result


def _existing_flows() -> list[Flow]:
    return [Flow(m.name, m.source.alias, m.target.alias, m.replication_policy, m.separator, m.topics, m.topics_exclude)
            for m in Mirror.objects.select_related("source", "target")]


class MirrorSerializer(serializers.ModelSerializer):
    source = ClusterAliasField()
    target = ClusterAliasField()
    connectors = ConnectorsField(required=False)
    spark = serializers.JSONField(required=False, help_text=(
        "spark-submit resources, each optional: master (overrides SPARK_MASTER; `yarn` runs the driver in a YARN "
        "container), queue (YARN), driver_memory, executor_memory (e.g. 512m, 2g), driver_cores (YARN), "
        "executor_cores, total_executor_cores, num_executors, conf ({spark.*: value}, within the installation's "
        "MIRRORPLANE_SPARK_CONF_POLICY)"))

    class Meta:
        model = Mirror
        fields = ["name", "source", "target", "topics", "topics_exclude", "groups", "groups_exclude",
                  "replication_policy", "separator", "connectors", "spark", "generation", "created_at", "updated_at"]
        read_only_fields = ["generation", "created_at", "updated_at"]
        extra_kwargs = {"topics_exclude": {"allow_blank": True}, "groups_exclude": {"allow_blank": True}}

    def validate_name(self, value: str) -> str:
        if self.instance is not None and value != self.instance.name:
            raise serializers.ValidationError("a mirror cannot be renamed")
        return value

    def _patterns(self, value: str) -> str:
        try:
            compile_patterns(value)
        except PatternError as error:
            raise serializers.ValidationError(str(error)) from None
        return value

    validate_topics = validate_topics_exclude = _patterns
    validate_groups = validate_groups_exclude = _patterns

    def validate_separator(self, value: str) -> str:
        if not value or any(ch.isspace() for ch in value):
            raise serializers.ValidationError("a separator must be non-empty and without spaces")
        return value

    def validate_spark(self, value: Any) -> dict:
        return validate_spark_resources(value)

    def validate(self, attrs: dict) -> dict:
        source = attrs.get("source", getattr(self.instance, "source", None))
        target = attrs.get("target", getattr(self.instance, "target", None))
        if source is not None and source == target:
            raise serializers.ValidationError({"target": "source and target must be different clusters"})
        if source is not None and target is not None:
            reasons = conflicts(self._flow(attrs, source, target), _existing_flows())
            if reasons:
                raise serializers.ValidationError({"topics": reasons})
        return attrs

    def _flow(self, attrs: dict, source: Cluster, target: Cluster) -> Flow:
        def value(field: str) -> str:
            return attrs.get(field, getattr(self.instance, field, None) or Mirror._meta.get_field(field).default)

        return Flow(attrs.get("name", getattr(self.instance, "name", "")), source.alias, target.alias,
                    value("replication_policy"), value("separator"), value("topics"), value("topics_exclude"))

    def create(self, validated_data: dict) -> Mirror:
        connectors = validated_data.pop("connectors", None)
        return create_mirror(connectors=connectors, **validated_data)

    def update(self, instance: Mirror, validated_data: dict) -> Mirror:
        connectors = validated_data.pop("connectors", None)
        return update_mirror(instance, connectors=connectors, **validated_data)


# -- query parameters ----------------------------------------------------------------------
MAX_POINTS = 50_000
_EPOCH_SECONDS_MAX = 1e11  # year 5138: larger values are milliseconds by mistake


class _EpochSecondsField(serializers.FloatField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, min_value=0, max_value=_EPOCH_SECONDS_MAX, error_messages={
            "max_value": "expected seconds since the epoch, not milliseconds"}, **kwargs)


class SeriesQuerySerializer(serializers.Serializer):
    """`?series=heartbeat|lag|checkpoint&since=&until=&limit=` of a mirror's metrics."""

    series = serializers.ChoiceField(choices=SERIES, error_messages={
        "invalid_choice": f'unknown series "{{input}}": use one of {", ".join(SERIES)}'})
    since = _EpochSecondsField(help_text="seconds since the epoch; default: 15 minutes before `until`")
    until = _EpochSecondsField(help_text="seconds since the epoch; default: now")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_POINTS,
                                     help_text="at most this many points, the newest of the window")

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] > attrs["until"]:
            raise serializers.ValidationError({"since": "must not be after until"})
        return attrs


class _TimeoutField(serializers.FloatField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, min_value=0.5, max_value=60,
                         help_text="seconds to wait for the cluster (default 9)", **kwargs)


class TranslateQuerySerializer(serializers.Serializer):
    """`?group=&source=&target=[&timeout=&replication_policy=&separator=]` of offset translation."""

    group = serializers.CharField(max_length=255, trim_whitespace=False)
    source = ClusterAliasField(help_text="alias of the cluster the group consumes from now")
    target = ClusterAliasField(help_text="alias of the cluster to translate its offsets to")
    timeout = _TimeoutField()
    replication_policy = serializers.ChoiceField(
        choices=ReplicationPolicyChoice.values, required=False,
        help_text="default: that of a mirror source -> target, else MM2's default policy")
    separator = serializers.CharField(required=False, max_length=8, help_text="default: the mirror's, else '.'")

    def validate_separator(self, value: str) -> str:
        if any(ch.isspace() for ch in value):
            raise serializers.ValidationError("a separator must be non-empty and without spaces")
        return value

    def validate(self, attrs: dict) -> dict:
        if attrs["source"] == attrs["target"]:
            raise serializers.ValidationError({"target": "source and target must be different clusters"})
        return attrs


class ReplicationQuerySerializer(serializers.Serializer):
    """`?source=A[&timeout=]` of a cluster's replication topology."""

    source = serializers.CharField(required=False, max_length=255,
                                   help_text="an upstream alias to report hops for even when unknown (-1)")
    timeout = _TimeoutField()
