import time

import redis
from django.db.models import ProtectedError, Q
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from mirrorcore.admin import ClusterError
from mirrorcore.policy import ReplicationPolicy
from mirrors.api import exceptions as errors
from mirrors.api import schemas
from mirrors.api.serializers import (
    ClusterSerializer,
    MirrorSerializer,
    ReplicationQuerySerializer,
    SeriesQuerySerializer,
    TranslateQuerySerializer,
)
from mirrors.models import Cluster, Mirror
from mirrors.roles import ADMIN, VIEWER
from mirrors.services import audit, offsets
from mirrors.services import metrics as mirror_metrics
from mirrors.services import status as mirror_status
from mirrors.services.clusters import check_cluster
from mirrors.services.events import actor_of
from mirrors.services.mirrors import delete_mirror

DEFAULT_WINDOW_SECONDS = 15 * 60


def _query(serializer_class: type, request: Request) -> dict:
    """Validated query parameters; a bad one is a 400 naming it."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _unavailable(error: Exception | str) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)


class ClusterViewSet(viewsets.ModelViewSet):
    queryset = Cluster.objects.all()
    serializer_class = ClusterSerializer
    lookup_field = "alias"

    @property
    def write_role(self) -> str:
        """Checking a stored cluster's connection changes nothing: viewers may (the clusters page shows it)."""
        return VIEWER if self.action == "check" else ADMIN

    def perform_create(self, serializer: BaseSerializer[Cluster]) -> None:
        audit.cluster_created(actor_of(self.request.user), serializer.save())

    def perform_update(self, serializer: BaseSerializer[Cluster]) -> None:
        audit.cluster_updated(actor_of(self.request.user), serializer.save(), serializer.validated_data)

    def destroy(self, request: Request, *args, **kwargs) -> Response:
        cluster = self.get_object()
        try:
            cluster.delete()
        except ProtectedError:
            names = sorted(Mirror.objects.filter(Q(source=cluster) | Q(target=cluster)).values_list("name", flat=True))
            return Response({"detail": f"cluster {cluster.alias!r} is used by mirrors {names}: delete them first"},
                            status=status.HTTP_409_CONFLICT)
        audit.cluster_deleted(actor_of(request.user), cluster.alias)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: schemas.ClusterCheckResultSerializer})
    @action(detail=True, methods=["post"])
    def check(self, request: Request, alias: str | None = None) -> Response:
        return Response(check_cluster(self.get_object()).to_dict())

    @extend_schema(parameters=[ReplicationQuerySerializer],
                   responses={200: schemas.ReplicationInfoSerializer, 503: errors.UNAVAILABLE})
    @action(detail=True, methods=["get"])
    def replication(self, request: Request, alias: str | None = None) -> Response:
        """Clusters replicating into this one and their hop counts, from its heartbeat topics (MM2's MirrorClient)."""
        cluster = self.get_object()
        query = _query(ReplicationQuerySerializer, request)
        sources = (query["source"],) if "source" in query else ()
        try:
            return Response(offsets.replication_info(cluster, sources, timeout=query.get("timeout")))
        except ClusterError as error:
            return _unavailable(error)


class MirrorViewSet(viewsets.ModelViewSet):
    queryset = Mirror.objects.select_related("source", "target").prefetch_related("connectors")
    serializer_class = MirrorSerializer
    lookup_field = "name"

    def perform_create(self, serializer: BaseSerializer[Mirror]) -> None:
        audit.mirror_created(actor_of(self.request.user), serializer.save())

    def perform_update(self, serializer: BaseSerializer[Mirror]) -> None:
        assert serializer.instance is not None  # the mirror being updated
        before = audit.desired_states(serializer.instance)
        mirror = serializer.save()
        audit.mirror_updated(actor_of(self.request.user), mirror, serializer.validated_data, before)

    def perform_destroy(self, instance: Mirror) -> None:
        delete_mirror(instance)
        audit.mirror_deleted(actor_of(self.request.user), instance.name)

    @extend_schema(responses={200: schemas.MirrorStatusSerializer})
    @action(detail=True, methods=["get"])
    def status(self, request: Request, name: str | None = None) -> Response:
        return Response(mirror_status.describe(self.get_object()))

    @extend_schema(parameters=[SeriesQuerySerializer],
                   responses={200: schemas.MetricSeriesSerializer, 503: errors.UNAVAILABLE})
    @action(detail=True, methods=["get"])
    def metrics(self, request: Request, name: str | None = None) -> Response:
        """Points of one time series (heartbeat, lag, checkpoint), oldest first; default: the last 15 minutes."""
        mirror = self.get_object()
        query = _query(SeriesQuerySerializer, request)
        until = query.get("until", time.time())
        since = query.get("since", until - DEFAULT_WINDOW_SECONDS)
        try:
            points = mirror_metrics.read_series(mirror.name, query["series"], since, until, query.get("limit"))
        except redis.RedisError as error:
            return _unavailable(f"cannot read the {query['series']} series: {error}")
        return Response({"mirror": mirror.name, "series": query["series"], "since": since, "until": until,
                         "points": points})


class OffsetTranslateView(APIView):
    @extend_schema(parameters=[TranslateQuerySerializer],
                   responses={200: schemas.OffsetTranslationSerializer, 503: errors.UNAVAILABLE})
    def get(self, request: Request) -> Response:
        """A consumer group's offsets on `target` from the checkpoints of flow source -> target (MM2's
        RemoteClusterUtils.translateOffsets)."""
        query = _query(TranslateQuerySerializer, request)
        source, target = query["source"], query["target"]
        policy = offsets.policy_for(source, target)
        if "replication_policy" in query or "separator" in query:
            policy = ReplicationPolicy(query.get("replication_policy", policy.kind),
                                       query.get("separator", policy.separator), policy.internal_separator_enabled)
        try:
            return Response(offsets.translate(query["group"], source, target, policy, query.get("timeout")))
        except ClusterError as error:
            return _unavailable(error)
