"""`GET /mirrors/{name}/graphs/?range=15m|1h|24h|7d|30d[&topic=T]`: the dashboard's graphs of one mirror."""

from __future__ import annotations

import re

import redis
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrors.api import exceptions as errors
from mirrors.api import schemas
from mirrors.models import Mirror
from mirrors.services import graphs

RANGE_ERROR = f"must be one of {', '.join(graphs.RANGES)}"
_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")


class GraphsQuerySerializer(serializers.Serializer):
    """`?range=15m|1h|24h|7d|30d&topic=`: the range (default 15m) and a topic to drill down to its partitions."""

    range = serializers.ChoiceField(
        choices=list(graphs.RANGES), required=False, default="15m",
        help_text="15m and 1h: raw points; 24h: one point per minute; 7d and 30d: one point per hour",
        error_messages={"invalid_choice": RANGE_ERROR, "blank": RANGE_ERROR})
    topic = serializers.CharField(required=False, allow_blank=True, max_length=249, trim_whitespace=False,
                                  help_text="a source topic: lag per partition of it")

    def validate_topic(self, value: str) -> str | None:
        if value and not _TOPIC.fullmatch(value):
            raise serializers.ValidationError(f"{value!r} is not a Kafka topic name "
                                              "(letters, digits, '.', '_' and '-' only)")
        return value or None


class GraphsView(APIView):
    """Plotly-ready traces: heartbeat latency, lag (records, seconds), throughput, checkpoints, tasks."""

    @extend_schema(
        parameters=[GraphsQuerySerializer],
        responses={200: schemas.GraphsSerializer, 400: errors.INVALID, 404: errors.NOT_FOUND, 503: errors.UNAVAILABLE},
        description="The graphs of one mirror over `range` (resolution: `raw` for 15m and 1h, `1m` for 24h, `1h` "
                    "for 7d and 30d), at most ~300 points per trace; an empty graph says why in `empty`.")
    def get(self, request: Request, name: str) -> Response:
        mirror = Mirror.objects.select_related("source", "target").prefetch_related("connectors").filter(
            name=name).first()
        if mirror is None:
            raise NotFound(f"no mirror named {name!r}")
        query = GraphsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            body = graphs.mirror_graphs(mirror, query.validated_data["range"], query.validated_data.get("topic"))
        except redis.RedisError as error:
            return Response({"detail": f"cannot read the mirror's time series: {error}"},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(body)
