from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from rest_framework import serializers

from mirrorcore.series import SERIES
from mirrors.choices import ConnectorKind, DesiredState
from mirrors.choices import ReplicationPolicy as ReplicationPolicyChoice
from mirrors.models import Cluster, Connector, Mirror
from mirrors.services import validation
from mirrors.services.clusters import save_cluster
from mirrors.services.mirrors import create_mirror, update_mirror
from mirrors.services.validation import CLUSTER_SECURITY_FIELDS, Invalid


def checked(check: Callable[..., Any], *args: Any) -> Any:
    """`check(*args)`, a domain rule's refusal as the API's ValidationError (same fields, same messages)."""
    try:
        return check(*args)
    except Invalid as error:
        raise serializers.ValidationError(error.errors) from None


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
        return checked(validation.unchanged_alias, self.instance, value)

    def validate_bootstrap_servers(self, value: str) -> str:
        return checked(validation.bootstrap_servers, value)

    def validate_config(self, value: Any) -> dict[str, str]:
        return checked(validation.cluster_config, value)

    def validate_ca_pem(self, value: str) -> str:
        return checked(validation.certificates_pem, value)

    def validate_cert_pem(self, value: str) -> str:
        return checked(validation.certificates_pem, value)

    def validate_key_pem(self, value: str) -> str:
        return checked(validation.private_key_pem, value)

    def validate(self, attrs: dict) -> dict:
        merged = {f: attrs.get(f, getattr(self.instance, f, "")) for f in CLUSTER_SECURITY_FIELDS}
        checked(validation.cluster_security, merged, set(attrs))
        if "bootstrap_servers" in attrs:
            checked(validation.apart_from_mirrored_clusters, self.instance, attrs["bootstrap_servers"])
        return attrs

    def create(self, validated_data: dict) -> Cluster:
        return save_cluster(None, validated_data)

    def update(self, instance: Cluster, validated_data: dict) -> Cluster:
        return save_cluster(instance, validated_data)


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
        return checked(validation.connector_config, value)


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
                misplaced = validation.misplaced_properties(kind, result[kind].get("config", {}))
                if misplaced:
                    errors[kind] = {"config": misplaced}
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

    def fail(self, key: str, **kwargs: Any) -> NoReturn:
        if key == "does_not_exist":
            kwargs["value"] = str(kwargs.get("value"))
        super().fail(key, **kwargs)


class MirrorSerializer(serializers.ModelSerializer):
    source = ClusterAliasField()  # type: ignore[assignment]  # the field "source", not Field.source
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
        return checked(validation.unchanged_name, self.instance, value)

    def _patterns(self, value: str) -> str:
        return checked(validation.patterns, value)

    validate_topics = validate_topics_exclude = _patterns
    validate_groups = validate_groups_exclude = _patterns

    def validate_separator(self, value: str) -> str:
        return checked(validation.separator, value)

    def validate_spark(self, value: Any) -> dict:
        return checked(validation.spark_resources, value)

    def validate(self, attrs: dict) -> dict:
        source = attrs.get("source", getattr(self.instance, "source", None))
        target = attrs.get("target", getattr(self.instance, "target", None))
        checked(validation.distinct_clusters, source, target)
        if source is not None and target is not None:
            checked(validation.no_conflict, validation.mirror_flow(attrs, self.instance, source, target))
        return attrs

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
    source = ClusterAliasField(  # type: ignore[assignment]  # the field "source", not Field.source
        help_text="alias of the cluster the group consumes from now")
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

    source = serializers.CharField(required=False, max_length=255,  # type: ignore[assignment]  # the field "source", not Field.source
                                   help_text="an upstream alias to report hops for even when unknown (-1)")
    timeout = _TimeoutField()


class SerializerInputs:
    """Fields of an imported cluster or mirror read as the API reads them (interchange.apply.Inputs)."""

    def cluster(self, existing: Cluster | None, data: dict[str, Any]) -> dict[str, Any]:
        return self._read(ClusterSerializer(existing, data=data, partial=existing is not None))

    def mirror(self, existing: Mirror | None, data: dict[str, Any]) -> dict[str, Any]:
        return self._read(MirrorSerializer(existing, data=data))

    @staticmethod
    def _read(serializer: serializers.Serializer) -> dict[str, Any]:
        if not serializer.is_valid():
            raise Invalid(serializer.errors)
        return dict(serializer.validated_data)
