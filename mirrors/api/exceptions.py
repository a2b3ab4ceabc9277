"""Errors as clear JSON: which field, and why; and their shapes for the OpenAPI schema."""

from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    if isinstance(exc, exceptions.NotAuthenticated):
        return Response(
            {"detail": "authentication required",
             "Authorization": ["send the header 'Authorization: Token <token>' "
                               "(POST /api/v1/auth/token/ with username and password returns one)"]},
            status=status.HTTP_401_UNAUTHORIZED,
            headers={"WWW-Authenticate": "Token"},
        )
    return drf_exception_handler(exc, context)


class DetailSerializer(serializers.Serializer):
    """An error in one sentence."""

    detail = serializers.CharField()


FIELD_ERRORS = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}},
                "description": "each field (or subject) at fault -> why"}

INVALID = OpenApiResponse(FIELD_ERRORS, description="invalid parameters, keyed by field")
NOT_FOUND = OpenApiResponse(DetailSerializer, description="no such mirror, connector or task")
REFUSED = OpenApiResponse(FIELD_ERRORS, description="refused now, nothing changed: keyed by the subject, with why")
UNAVAILABLE = OpenApiResponse(DetailSerializer, description="Kafka or Redis cannot be read now: the client's reason")
