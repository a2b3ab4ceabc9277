"""Response shapes of the API's operations that answer a document built by a service, for the OpenAPI schema.

These serializers only document: the views return the services' dictionaries as they are. Nested maps keyed
by a connector kind, a cluster alias or a health are `DictField`s of their value's shape.
"""

from __future__ import annotations

from rest_framework import serializers

Str, Int, Num, Bool = serializers.CharField, serializers.IntegerField, serializers.FloatField, serializers.BooleanField


def _any(help_text: str = "", **kwargs) -> serializers.JSONField:
    return serializers.JSONField(help_text=help_text, **kwargs)


def _list(child: serializers.Field, help_text: str = "", **kwargs) -> serializers.ListField:
    return serializers.ListField(child=child, help_text=help_text, **kwargs)


def _map(child: serializers.Field, help_text: str = "", **kwargs) -> serializers.DictField:
    return serializers.DictField(child=child, help_text=help_text, **kwargs)


# -- clusters and offsets ------------------------------------------------------------------------

class ClusterCheckResultSerializer(serializers.Serializer):
    """A cluster's connection check: reachable with its brokers, or the client's error."""

    reachable = Bool()
    brokers = Int(allow_null=True, help_text="number of brokers (null when unreachable)")
    controller = Int(allow_null=True, help_text="the controller's broker id")
    cluster_id = Str(allow_null=True)
    error = Str(allow_null=True, help_text="why the cluster could not be reached")


class ReplicationInfoSerializer(serializers.Serializer):
    """Clusters replicating into this one, from its heartbeat topics (MM2's MirrorClient)."""

    cluster = Str()
    upstream_clusters = _list(Str())
    hops = _map(Int(), "alias -> replication hops (-1: no heartbeat topic leads from it)")
    heartbeat_topics = _list(Str())


class TranslatedOffsetSerializer(serializers.Serializer):
    topic = Str()
    partition = Int()
    offset = Int()


class OffsetTranslationSerializer(serializers.Serializer):
    """A consumer group's offsets on the target, from the checkpoints of the flow source -> target."""

    group = Str()
    source = Str()  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str()
    checkpoints_topic = Str()
    offsets = TranslatedOffsetSerializer(many=True)


# -- a mirror: status, metrics, graphs --------------------------------------------------------------

class ApplicationStatusSerializer(serializers.Serializer):
    state = Str(allow_null=True, help_text="not_running, starting, running, backoff, failed, ...")
    engine = Str(allow_null=True)
    id = Str(allow_null=True, help_text="the cluster manager's application id")
    tracking_url = Str(allow_null=True)
    pid = Int(allow_null=True)
    restarts = Int()
    consecutive_failures = Int(required=False)
    submitted_at = serializers.DateTimeField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True, required=False)
    last_error = Str(allow_blank=True)
    spark_ui = Str(allow_null=True)


class ConnectorStatusSerializer(serializers.Serializer):
    state = Str(help_text="Kafka Connect's: UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED, RESTARTING")
    desired_state = Str(help_text="running | paused | stopped")
    restarts = Int()
    error = Str(allow_blank=True)
    tasks = _list(_map(_any()), "[{id, state, ...}]")
    state_changed_at = serializers.DateTimeField(allow_null=True)


class ProgressSerializer(serializers.Serializer):
    """The source connector's counters (besides these, the application's metrics by name)."""

    reported_at = Num(allow_null=True)
    topics = _list(Str())
    held_back_topics = _map(_any(), "topic -> why it is not replicated yet")
    partitions = _list(_map(_any()), "[{topic, partition, upstream_offset, downstream_offset, ...}]")
    heartbeats_emitted = Int()
    resumed = _any("the latest start without a usable checkpoint: cause, at, partitions", allow_null=True)
    replication_mode = _any("setting, mode and why", allow_null=True)


class LinkHealthSerializer(serializers.Serializer):
    state = Str(help_text="healthy | unhealthy | unknown")
    reason = Str(allow_blank=True)
    last_heartbeat_at = Num(allow_null=True)
    latency_ms = Num(allow_null=True)
    unhealthy_after_seconds = Num()


class CheckpointGroupSerializer(serializers.Serializer):
    group = Str()
    partitions = _list(_map(_any()), "[{topic, partition, ..., checkpoint_age_seconds}]")


class MirrorStatusSerializer(serializers.Serializer):
    """A mirror's application, connectors, live progress, link health, checkpoints and newest lag point."""

    name = Str()
    generation = Int()
    application = ApplicationStatusSerializer()
    connectors = _map(ConnectorStatusSerializer(), "connector kind -> its status")
    progress = ProgressSerializer(allow_null=True, help_text="null while no application reports")
    link = LinkHealthSerializer()
    checkpoints = CheckpointGroupSerializer(many=True, allow_null=True)
    lag = _map(_any(), "the newest lag point: {at, records, seconds, ...}", allow_null=True)


class MetricSeriesSerializer(serializers.Serializer):
    """Points of one time series, oldest first."""

    mirror = Str()
    series = Str()
    since = Num()
    until = Num()
    points = _list(_map(_any()), "[{at, ...}]: `at` in epoch seconds, the other fields the series'")


class TraceSerializer(serializers.Serializer):
    name = Str()
    x = _list(Num(), "epoch seconds")
    y = _list(Num(allow_null=True), "a value, or null for a pause in the recording")


class GraphSerializer(serializers.Serializer):
    title = Str()
    unit = Str()
    traces = TraceSerializer(many=True)
    empty = Str(allow_null=True, help_text="why the graph is empty (null when it has points)")
    scale = serializers.ChoiceField(choices=["linear", "log"], help_text=(
        "the y axis: log when every point is above zero and the largest is 20 times their median or more"))


class GraphsSerializer(serializers.Serializer):
    """The dashboard's graphs of one mirror, ready for plotly."""

    mirror = Str()
    range = Str()
    since = Num()
    until = Num()
    resolution = Str(help_text="raw | 1m | 1h")
    topic = Str(allow_null=True)
    graphs = _map(GraphSerializer(), "heartbeat, lag_records, lag_seconds, throughput_records, throughput_bytes, "
                                     "checkpoint, tasks")


# -- connector verbs ---------------------------------------------------------------------------------

class VerbResultSerializer(serializers.Serializer):
    """A connector verb's answer: the connector's desired and observed state after it."""

    mirror = Str()
    connector = Str(help_text="source | checkpoint | heartbeat")
    desired_state = Str()
    state = Str()
    restart_token = Int()
    detail = Str()


# -- dashboard forms ---------------------------------------------------------------------------------

class PreviewTopicSerializer(serializers.Serializer):
    topic = Str()
    remote_topic = Str()
    partitions = Int()


class PreviewExcludedSerializer(serializers.Serializer):
    topic = Str()
    reason = Str()


class PreviewResultSerializer(serializers.Serializer):
    """The source's topics a mirror would replicate, with their names on the target."""

    source = Str()  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str(allow_null=True)
    matched = Int()
    total = Int()
    topics = PreviewTopicSerializer(many=True)
    excluded = PreviewExcludedSerializer(many=True)
    limit = Int(help_text="each list has at most this many entries")
    truncated = Bool()


# -- import ------------------------------------------------------------------------------------------

class _Names(serializers.Serializer):
    clusters = _list(Str())
    mirrors = _list(Str(), required=False)


class AdoptedFlowSerializer(serializers.Serializer):
    mirror = Str()
    offsets_cluster = Str()
    offsets_topic = Str()
    adopted = Int(help_text="partitions with a committed MM2 offset")
    fallback = Int()
    partitions = _list(_map(_any()), "[{topic, partition, start, from, ...}]")


class ImportResultSerializer(serializers.Serializer):
    """What an import created, updated or reused (a dry run: what it would), and what it left out."""

    dry_run = Bool()
    created = _Names()
    updated = _Names()
    reused = _Names()
    clusters = _list(_map(_any()), "the file's clusters, without secrets")
    mirrors = _list(_map(_any()), "the file's mirrors, with their connectors")
    needs_values = _list(_map(_any()), "[{cluster, field, secret, reason}]: secrets to supply")
    unsupported = _list(_map(_any()), "[{path, reason}]")
    warnings = _list(Str())
    ignored = _list(_map(_any()), "other resources of the file: [{kind, name}]")
    adopted = AdoptedFlowSerializer(many=True, required=False, help_text="with adopt=true")


# -- overview -----------------------------------------------------------------------------------------

class OverviewClusterSerializer(serializers.Serializer):
    alias = Str()
    bootstrap_servers = Str()
    mirrors_out = Int()
    mirrors_in = Int()


class OverviewConnectorSerializer(serializers.Serializer):
    state = Str()
    desired_state = Str()
    tasks = Int()
    error = Str(allow_null=True)


class OverviewMirrorSerializer(serializers.Serializer):
    name = Str()
    source = Str()  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str()
    health = Str(help_text="running | degraded | failed | paused | stopped")
    reason = Str()
    application = Str(allow_null=True)
    link = Str(help_text="healthy | unhealthy | unknown")
    latency_ms = Num(allow_null=True)
    lag_records = Int(allow_null=True)
    lag_seconds = Num(allow_null=True)
    connectors = _map(OverviewConnectorSerializer(), "connector kind -> its state")
    url = Str()


class LinkMirrorSerializer(serializers.Serializer):
    name = Str()
    health = Str()
    reason = Str()
    latency_ms = Num(allow_null=True)
    lag_records = Int(allow_null=True)
    url = Str()


class OverviewLinkSerializer(serializers.Serializer):
    """The mirrors of one pair of clusters and direction, for the topology."""

    source = Str()  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str()
    count = Int()
    health = Str(help_text="the worst of its mirrors")
    counts = _map(Int(), "health -> mirrors")
    latency_ms = Num(allow_null=True)
    lag_records = Int(allow_null=True)
    mirrors = LinkMirrorSerializer(many=True)
    url = Str(allow_null=True, help_text="the mirror's, when the link has one")
    label = Str()  # type: ignore[assignment]  # the field "label", not Field.label


class ProblemSerializer(serializers.Serializer):
    severity = Str(help_text="error | warning")
    mirror = Str(allow_null=True)
    connector = Str(allow_null=True)
    title = Str()
    detail = Str()
    url = Str(allow_null=True)


class OverviewSerializer(serializers.Serializer):
    """Clusters, mirrors with their health, the links between clusters, problems and counts."""

    generated_at = Num()
    clusters = OverviewClusterSerializer(many=True)
    mirrors = OverviewMirrorSerializer(many=True)
    links = OverviewLinkSerializer(many=True)
    problems = ProblemSerializer(many=True)
    counts = _map(Int(), "health -> mirrors")


# -- readiness and failover ------------------------------------------------------------------------

class ReadinessTopicSerializer(serializers.Serializer):
    topic = Str()
    remote_topic = Str()
    lag_records = Int(allow_null=True)
    lag_seconds = Num(allow_null=True)
    caught_up = Bool()


class ReadinessGroupSerializer(serializers.Serializer):
    group = Str()
    partitions = Int()
    checkpointed_partitions = Int()
    synced_partitions = Int(allow_null=True, help_text="null when the target's offsets are not read")
    checkpointed = Bool()
    on_target = Bool()
    note = Str(allow_null=True)


class ReadinessSerializer(serializers.Serializer):
    """Whether a mirror is drained: its topics caught up, its groups on the target, the source idle."""

    mirror = Str()
    topics = ReadinessTopicSerializer(many=True)
    groups = ReadinessGroupSerializer(many=True)
    source_idle_seconds = Num(allow_null=True)
    producers_stopped = Bool()
    drained = Bool()
    summary = Str()


class FailoverGroupSerializer(serializers.Serializer):
    group = Str()
    direction = Str(help_text="forward (to the target) | back (to the source)")
    status = Str(help_text="synced | pending")
    note = Str(allow_null=True)
    committed_partitions = Int()
    offsets = _list(_map(_any()))


class ReverseMirrorSerializer(serializers.Serializer):
    name = Str()
    exists = Bool()
    source = Str(required=False)  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str(required=False)
    application = Str(required=False)
    connectors = _map(Str(), "connector kind -> desired state", required=False)
    url = Str(required=False)
    created = Bool(required=False, help_text="in a failback's answer: created now (else resumed)")


class FailoverSerializer(serializers.Serializer):
    """A mirror's failover (or failback): its phase, the groups moved and those still pending."""

    mirror = Str()
    source = Str()  # type: ignore[assignment]  # the field "source", not Field.source
    target = Str()
    phase = Str()
    forced = Bool()
    drained = Bool()
    readiness = Str(help_text="the readiness summary when it failed over")
    failed_over_at = serializers.DateTimeField(allow_null=True)
    failed_back_at = serializers.DateTimeField(allow_null=True)
    source_connector = Str(help_text="the source connector's desired state")
    groups = FailoverGroupSerializer(many=True)
    pending = _list(Str(), "groups still to move to the target")
    pending_back = _list(Str(), "groups still to return to the source")
    reverse_mirror = ReverseMirrorSerializer(allow_null=True)
    source_stopped = Bool(required=False, help_text="in a failover's answer: the source connector stopped in time")
