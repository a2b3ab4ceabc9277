"""Failover and failback of a mirror (operator role); the work is in mirrors/services/failover*.py."""

from __future__ import annotations

import redis
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrorcore.admin import ClusterError
from mirrors.api import exceptions as errors
from mirrors.api import schemas
from mirrors.api.dashboard import MAX_IDLE_SECONDS
from mirrors.models import Failover, Mirror
from mirrors.services import failback, failover
from mirrors.services.events import actor_of
from mirrors.services.failover_plan import Refused

MAX_TIMEOUT_SECONDS = 600


class FailoverParameters(serializers.Serializer):
    """`force`, `timeout`, `idle_seconds`: in the query string or a JSON body."""

    force = serializers.BooleanField(required=False, default=False,
                                     help_text="fail over at once, without waiting for the source to drain")
    timeout = serializers.FloatField(required=False, default=failover.DEFAULT_TIMEOUT_SECONDS, min_value=1,
                                     max_value=MAX_TIMEOUT_SECONDS,
                                     help_text="seconds to wait for the source to drain (409 when it does not)")
    idle_seconds = serializers.FloatField(
        required=False, default=failover.DEFAULT_IDLE_SECONDS, min_value=1, max_value=MAX_IDLE_SECONDS,
        help_text="seconds without a write to the source after which its producers count as stopped")


def _mirror(name: str) -> Mirror:
    mirror = Mirror.objects.select_related("source", "target").filter(name=name).first()
    if mirror is None:
        raise NotFound(f"no mirror {name!r}")
    return mirror


def _parameters(request: Request) -> dict:
    given = request.query_params.dict() | (request.data if isinstance(request.data, dict) else {})
    parameters = FailoverParameters(data=given)
    parameters.is_valid(raise_exception=True)
    return parameters.validated_data


def _run(call) -> Response:
    try:
        return Response(call())
    except Refused as refused:
        return Response(refused.errors, status=refused.status)
    except redis.RedisError as error:
        return Response({"detail": f"cannot read the lag series: {error}"}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    except ClusterError as error:
        return Response({"detail": f"{error} (nothing changed)"}, status=status.HTTP_503_SERVICE_UNAVAILABLE)


class FailoverView(APIView):
    """`POST /mirrors/{name}/failover/[?force=&timeout=&idle_seconds=]` (operator); `GET`: the last failover."""

    write_role = "operator"

    @extend_schema(responses={200: schemas.FailoverSerializer, 404: errors.NOT_FOUND})
    def get(self, request: Request, name: str) -> Response:
        record = Failover.objects.filter(mirror=_mirror(name)).first()
        if record is None:
            raise NotFound(f"mirror {name!r} has not failed over")
        return Response(failover.document(record))

    @extend_schema(request=FailoverParameters, parameters=[FailoverParameters],
                   responses={200: schemas.FailoverSerializer, 400: errors.INVALID, 404: errors.NOT_FOUND,
                              409: errors.REFUSED, 503: errors.UNAVAILABLE})
    def post(self, request: Request, name: str) -> Response:
        mirror = _mirror(name)
        parameters = _parameters(request)
        return _run(lambda: failover.failover(mirror, actor_of(request.user), **parameters))


class FailbackView(APIView):
    """`POST /mirrors/{name}/failback/` (operator): the reverse mirror, and the groups back to the source."""

    write_role = "operator"

    @extend_schema(request=None, responses={200: schemas.FailoverSerializer, 404: errors.NOT_FOUND,
                                            409: errors.REFUSED, 503: errors.UNAVAILABLE})
    def post(self, request: Request, name: str) -> Response:
        mirror = _mirror(name)
        return _run(lambda: failback.failback(mirror, actor_of(request.user)))
