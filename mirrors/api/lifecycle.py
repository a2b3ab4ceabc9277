"""Connector verbs with Kafka Connect's paths, and the event history."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrors.api import exceptions as errors
from mirrors.api import schemas
from mirrors.choices import ConnectorKind
from mirrors.models import Connector, Event, Mirror
from mirrors.services import lifecycle
from mirrors.services.events import actor_of
from mirrors.services.status import connector_now


def _connector(name: str, kind: str) -> Connector:
    mirror = get_object_or_404(Mirror, name=name)
    if kind not in ConnectorKind.values:
        raise NotFound(f"no connector kind {kind!r}: use one of {', '.join(ConnectorKind.values)}")
    return mirror.connectors.get(kind=kind)


def _accepted(result: lifecycle.VerbResult) -> Response:
    connector = result.connector
    body = {"mirror": connector.mirror.name, "connector": connector.kind, "desired_state": connector.desired_state,
            "state": connector.state, "restart_token": connector.restart_token, "detail": result.detail}
    return Response(body, status=status.HTTP_202_ACCEPTED if result.accepted else status.HTTP_200_OK)


class ConnectorStateView(APIView):
    """`PUT .../connectors/{kind}/pause|resume|stop/`: returns at once (202); the status follows."""

    write_role = "operator"
    verb = ""

    @extend_schema(request=None, responses={202: schemas.VerbResultSerializer, 404: errors.NOT_FOUND})
    def put(self, request: Request, name: str, kind: str) -> Response:
        return _accepted(lifecycle.change_state(_connector(name, kind), self.verb, actor_of(request.user)))


class _RestartQuery(serializers.Serializer):
    include_tasks = serializers.BooleanField(required=False, default=False)
    only_failed = serializers.BooleanField(required=False, default=False)


class ConnectorRestartView(APIView):
    """`POST .../connectors/{kind}/restart/?include_tasks=&only_failed=` (Kafka Connect's semantics)."""

    write_role = "operator"

    @extend_schema(request=None, parameters=[_RestartQuery], responses={
        202: schemas.VerbResultSerializer,
        200: OpenApiResponse(schemas.VerbResultSerializer, description="only_failed and nothing failed: no restart"),
        404: errors.NOT_FOUND})
    def post(self, request: Request, name: str, kind: str) -> Response:
        query = _RestartQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return _accepted(lifecycle.restart(_connector(name, kind), actor_of(request.user), **query.validated_data))


class TaskRestartView(APIView):
    """`POST .../connectors/{kind}/tasks/{id}/restart/`."""

    write_role = "operator"

    @extend_schema(request=None, responses={202: schemas.VerbResultSerializer, 404: errors.NOT_FOUND})
    def post(self, request: Request, name: str, kind: str, task: int) -> Response:
        connector = _connector(name, kind)
        known = {t.get("id") for t in connector_now(connector).tasks}
        if task not in known:
            raise NotFound(f"{kind} connector of {name!r} has no task {task}: its tasks are {sorted(known)}")
        return _accepted(lifecycle.restart(connector, actor_of(request.user), task=task))


class EventSerializer(serializers.ModelSerializer):
    class Meta:
        model = Event
        fields = ["id", "at", "kind", "actor", "mirror", "cluster", "connector", "action", "from_state", "to_state",
                  "detail"]


FILTERS = ("mirror", "connector", "kind", "actor", "action")


class EventList(generics.ListAPIView):
    """Newest first; filter with `?mirror=&connector=&kind=action|transition&actor=&action=`, `limit` (<= 1000)."""

    serializer_class = EventSerializer

    @extend_schema(parameters=[OpenApiParameter(f, str) for f in FILTERS] + [OpenApiParameter("limit", int)])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        events = Event.objects.all()
        if "name" in self.kwargs:
            get_object_or_404(Mirror, name=self.kwargs["name"])
            events = events.filter(mirror=self.kwargs["name"])
        for field in FILTERS:
            if self.request.query_params.get(field):
                events = events.filter(**{field: self.request.query_params[field]})
        return events[:_limit(self.request.query_params.get("limit"))]


def _limit(raw: str | None) -> int:
    try:
        value = int(raw) if raw else 200
    except ValueError:
        raise serializers.ValidationError({"limit": [f"expected an integer, got {raw!r}"]}) from None
    if not 1 <= value <= 1000:
        raise serializers.ValidationError({"limit": [f"must be between 1 and 1000, got {value}"]})
    return value
