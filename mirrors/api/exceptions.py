"""Errors as clear JSON: which field, and why."""

from rest_framework import exceptions, status
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
