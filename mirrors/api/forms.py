"""Helpers behind the dashboard's forms: a cluster check before saving, and a mirror's topic preview.

Both validate like the create endpoints (same serializers, same 400s) and save nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrorcore.admin import ClusterError
from mirrorcore.filters import DEFAULT_TOPICS, DEFAULT_TOPICS_EXCLUDE
from mirrors.api import schemas
from mirrors.api.exceptions import FIELD_ERRORS, DetailSerializer
from mirrors.api.serializers import ClusterAliasField, ClusterSerializer, MirrorSerializer
from mirrors.api.views import ClusterViewSet, MirrorViewSet
from mirrors.choices import ReplicationPolicy
from mirrors.models import Cluster
from mirrors.services import preview
from mirrors.services.clusters import check_cluster

if TYPE_CHECKING:
    from rest_framework.decorators import ViewSetAction

_CLUSTER_FIELDS = ("alias", "bootstrap_servers", "security_protocol", "sasl_mechanism", "username", "password",
                   "ca_pem", "cert_pem", "key_pem", "config")


_DETAIL_ACTIONS: dict[str, str | ViewSetAction[Any]] = {
    "get": "retrieve", "put": "update", "patch": "partial_update", "delete": "destroy"}


class PostBeforeDetail(APIView):
    """A POST-only helper at a path that is also a detail of the router's (`clusters/check/`, the cluster
    `check`; `mirrors/preview/`, the mirror `preview`), routed before it: POST is the helper, every other
    method goes to `detail_view` with `lookup`, so such a cluster or mirror is still read, changed and deleted.
    """

    detail_view: Any = None
    lookup: dict[str, str] = {}

    def dispatch(self, request, *args, **kwargs):
        if request.method != "POST":
            return self.detail_view(request, *args, **self.lookup)
        return super().dispatch(request, *args, **kwargs)


def unsaved_cluster(data: Any) -> Cluster:
    """A Cluster from create fields, validated as a create would be, never saved.

    When `alias` names a stored cluster, what the body leaves out (its secrets, typically) is the
    stored cluster's: the edit form sends no password it does not know.
    """
    alias = data.get("alias") if isinstance(data, dict) else None
    stored = Cluster.objects.filter(alias=alias).first() if isinstance(alias, str) and alias else None
    serializer = ClusterSerializer(stored, data=data)
    serializer.is_valid(raise_exception=True)
    cluster = Cluster(**{f: getattr(stored, f) for f in _CLUSTER_FIELDS}) if stored else Cluster()
    for field, value in serializer.validated_data.items():
        setattr(cluster, field, value)
    return cluster


class ClusterCheckView(PostBeforeDetail):
    """`POST /clusters/check/`: connect with the given settings (saved or not) and describe the cluster."""

    detail_view = staticmethod(ClusterViewSet.as_view(_DETAIL_ACTIONS))
    lookup = {"alias": "check"}

    @extend_schema(request=ClusterSerializer, responses={
        200: OpenApiResponse(schemas.ClusterCheckResultSerializer, description="as POST /clusters/{alias}/check/"),
        400: OpenApiResponse(FIELD_ERRORS, description="invalid fields, as a create would answer")})
    def post(self, request: Request) -> Response:
        return Response(check_cluster(unsaved_cluster(request.data)).to_dict())


class PreviewSerializer(serializers.Serializer):
    """The mirror fields that decide which topics are replicated and how they are named."""

    source = ClusterAliasField()  # type: ignore[assignment]  # the field "source", not Field.source
    target = ClusterAliasField(required=False, allow_null=True,
                               help_text="optional: topics that came from it are left out (cycles)")
    topics = serializers.CharField(required=False, default=DEFAULT_TOPICS, trim_whitespace=False)
    topics_exclude = serializers.CharField(required=False, default=DEFAULT_TOPICS_EXCLUDE, allow_blank=True,
                                           trim_whitespace=False)
    replication_policy = serializers.ChoiceField(choices=ReplicationPolicy.choices, required=False,
                                                 default=ReplicationPolicy.DEFAULT)
    separator = serializers.CharField(required=False, default=".", max_length=8, trim_whitespace=False)

    validate_topics = validate_topics_exclude = MirrorSerializer._patterns
    validate_separator = MirrorSerializer.validate_separator

    def validate(self, attrs: dict) -> dict:
        if attrs.get("target") is not None and attrs["target"] == attrs["source"]:
            raise serializers.ValidationError({"target": "source and target must be different clusters"})
        return attrs


class MirrorPreviewView(PostBeforeDetail):
    """`POST /mirrors/preview/`: the source's topics the mirror would replicate, with their remote names."""

    detail_view = staticmethod(MirrorViewSet.as_view(_DETAIL_ACTIONS))
    lookup = {"name": "preview"}

    @extend_schema(request=PreviewSerializer, responses={
        200: OpenApiResponse(schemas.PreviewResultSerializer,
                             description=f"each list has at most {preview.LIMIT} entries"),
        400: OpenApiResponse(FIELD_ERRORS, description="invalid fields, keyed by field"),
        503: OpenApiResponse(DetailSerializer,
                             description="the source cluster cannot be reached (the client's reason)")})
    def post(self, request: Request) -> Response:
        serializer = PreviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        target = data.get("target")
        try:
            return Response(preview.preview(
                data["source"], target.alias if target else None, topics=data["topics"],
                topics_exclude=data["topics_exclude"], replication_policy=data["replication_policy"],
                separator=data["separator"]))
        except ClusterError as error:
            return Response({"detail": f"cannot list the topics of {data['source'].alias!r}: {error}"},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
