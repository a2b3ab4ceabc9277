"""`POST /import/` of MM2 configurations and `GET /mirrors/{name}/export/` of one mirror as a file."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mirrors import interchange
from mirrors.api.exceptions import FIELD_ERRORS, DetailSerializer
from mirrors.api.schemas import ImportResultSerializer
from mirrors.api.serializers import SerializerInputs
from mirrors.interchange import strimzi
from mirrors.interchange.adopt import NotAdoptable
from mirrors.interchange.apply import Conflict, apply_plan
from mirrors.interchange.plan import InvalidContent
from mirrors.models import Mirror
from mirrors.services.events import actor_of

_TEXT_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain",
               "text/x-java-properties")


class _TextParser(BaseParser):
    """A raw file in the body (YAML or properties) as text."""

    media_type = "*/*"

    # the body as text: DRF makes request.data whatever parse returns (its stubs expect a mapping)
    def parse(self, stream, media_type=None, parser_context=None) -> str:  # type: ignore[override]
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        return stream.read().decode(encoding, errors="replace") if stream else ""


class _YamlParser(_TextParser):
    media_type = "application/yaml"


class _PropertiesParser(_TextParser):
    media_type = "text/*"


class _IgnoreFormatParameter(DefaultContentNegotiation):
    """`?format=` names the file format here, not DRF's renderer: answer JSON regardless."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ImportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=interchange.FORMATS, required=False,
                                     help_text="default: from the body's `format`, else detected")
    dry_run = serializers.BooleanField(required=False, default=False, help_text="report, create nothing")
    replace = serializers.BooleanField(required=False, default=False,
                                       help_text="update clusters and mirrors that exist and differ (else 409)")
    adopt = serializers.BooleanField(required=False, default=False, help_text=(
        "take over from the running MM2 the file describes: each partition starts after MM2's committed "
        "source offset, read from Kafka Connect's offsets topic (409 when a flow has none)"))


class ImportBodySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=interchange.FORMATS, required=False)
    content = serializers.CharField(trim_whitespace=False, help_text="the KafkaMirrorMaker2 YAML or MM2 properties")
    values = serializers.DictField(child=serializers.DictField(child=serializers.CharField(trim_whitespace=False)),
                                   required=False, help_text='{"<alias>": {"password": "...", "ca_pem": "..."}}')


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=interchange.FORMATS, required=False, default="strimzi")
    version = serializers.ChoiceField(choices=strimzi.VERSIONS, required=False,
                                      help_text="KafkaMirrorMaker2 apiVersion kafka.strimzi.io/<version> "
                                                "(format=strimzi only); default v1")


class ImportView(APIView):
    """Creates clusters and mirrors from Strimzi KafkaMirrorMaker2 resources or an MM2 properties file.

    A YAML file may hold several documents: other resources (KafkaNodePool, Kafka, ...) are listed in `ignored`.
    """

    write_role = "admin"
    parser_classes = [JSONParser, _YamlParser, _PropertiesParser, _TextParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _IgnoreFormatParameter

    @extend_schema(
        request={"application/json": ImportBodySerializer, "application/yaml": OpenApiTypes.STR,
                 "text/plain": OpenApiTypes.STR, "text/x-java-properties": OpenApiTypes.STR},
        parameters=[ImportQuerySerializer],
        responses={201: OpenApiResponse(ImportResultSerializer, description="created"),
                   200: OpenApiResponse(ImportResultSerializer, description="dry run: what an import would do"),
                   400: OpenApiResponse(FIELD_ERRORS, description="invalid content, keyed by path in the file"),
                   409: OpenApiResponse(FIELD_ERRORS,
                                        description="clusters or mirrors exist and differ; adopt: no MM2 offsets")},
    )
    def post(self, request: Request) -> Response:
        query = ImportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        if isinstance(request.data, str):
            body = {"content": request.data}
        else:
            serializer = ImportBodySerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            body = serializer.validated_data
        file_format = query.validated_data.get("format") or body.get("format")
        try:
            plan = interchange.parse(body["content"], file_format)
            result = apply_plan(plan, inputs=SerializerInputs(), actor=actor_of(request.user),
                                dry_run=query.validated_data["dry_run"], replace=query.validated_data["replace"],
                                values=body.get("values"), adopt=query.validated_data["adopt"])
        except (Conflict, NotAdoptable) as error:
            return Response(error.errors, status=status.HTTP_409_CONFLICT)
        except InvalidContent as error:
            return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_200_OK if result.dry_run else status.HTTP_201_CREATED
        return Response(result.to_dict(), status=code)


class ExportView(APIView):
    """One mirror as a Strimzi KafkaMirrorMaker2 resource (`?version=v1`, the default, or `v1beta2`) or MM2
    properties, without stored secrets."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = _IgnoreFormatParameter

    @extend_schema(parameters=[ExportQuerySerializer],
                   responses={(200, "application/yaml"): OpenApiTypes.STR, (200, "text/plain"): OpenApiTypes.STR,
                              404: OpenApiResponse(DetailSerializer, description="no such mirror")})
    def get(self, request: Request, name: str) -> HttpResponse:
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        mirror = get_object_or_404(Mirror.objects.select_related("source", "target"), name=name)
        file_format = query.validated_data["format"]
        try:
            text = interchange.render(mirror, file_format, query.validated_data.get("version"))
        except InvalidContent as error:
            return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
        extension, media_type = ("yaml", "application/yaml") if file_format == "strimzi" else ("properties",
                                                                                            "text/plain")
        response = HttpResponse(text, content_type=f"{media_type}; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="{mirror.name}.{extension}"'
        return response
