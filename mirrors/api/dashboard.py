"""The dashboard's data: the overview of every mirror, and a mirror's migration readiness."""

from __future__ import annotations

import redis
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrorcore.admin import ClusterError
from mirrors.api import exceptions as errors
from mirrors.api import schemas
from mirrors.models import Mirror
from mirrors.services.overview import overview
from mirrors.services.readiness import readiness

MAX_IDLE_SECONDS = 3600


class OverviewView(APIView):
    """`GET /overview/`: clusters, mirrors with their health, problems and counts (viewer)."""

    @extend_schema(responses={200: schemas.OverviewSerializer})
    def get(self, request: Request) -> Response:
        return Response(overview())


class ReadinessQuerySerializer(serializers.Serializer):
    """`?idle_seconds=&timeout=` of a mirror's migration readiness."""

    idle_seconds = serializers.FloatField(
        required=False, default=30.0, min_value=1, max_value=MAX_IDLE_SECONDS,
        help_text="seconds without a write to the source's mirrored topics after which producers count as stopped")
    timeout = serializers.FloatField(required=False, min_value=0.5, max_value=60,
                                     help_text="seconds to wait for the target cluster (default 9)")


class ReadinessView(APIView):
    """`GET /mirrors/{name}/readiness/`: per topic caught up, per group on the target, drained (viewer)."""

    @extend_schema(parameters=[ReadinessQuerySerializer], responses={
        200: schemas.ReadinessSerializer, 400: errors.INVALID, 404: errors.NOT_FOUND, 503: errors.UNAVAILABLE})
    def get(self, request: Request, name: str) -> Response:
        mirror = get_object_or_404(Mirror.objects.select_related("source", "target").prefetch_related("connectors"),
                                   name=name)
        query = ReadinessQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        try:
            return Response(readiness(mirror, params["idle_seconds"], params.get("timeout")))
        except redis.RedisError as error:
            return _unavailable(f"cannot read the lag series: {error}")
        except ClusterError as error:
            return _unavailable(error)


def _unavailable(error: Exception | str) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
