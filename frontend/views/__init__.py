"""The operator dashboard's pages: server-rendered HTML, kept live by small scripts over the REST API."""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mirrors.roles import ADMIN, OPERATOR, ROLES, has_role, role_of


def role_required(role: str):
    """Logged in (else to the login page) and at least `role` (else 403, naming the role needed)."""

    def decorate(view):
        @login_required
        @wraps(view)
        def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not has_role(request.user, role):
                return render(request, "frontend/forbidden.html",
                              {"needed": role, "role": role_of(request.user)}, status=403)
            return view(request, *args, **kwargs)

        return guarded

    return decorate


def page(request: HttpRequest, template: str, context: dict | None = None, status: int = 200) -> HttpResponse:
    """Render a dashboard page; every page knows the user's role (buttons and forms depend on it)."""
    role = role_of(request.user)
    rank = ROLES.index(role) if role else -1
    return render(request, template, {"role": role, "can_operate": rank >= ROLES.index(OPERATOR),
                                      "can_edit": rank >= ROLES.index(ADMIN)} | (context or {}), status=status)
