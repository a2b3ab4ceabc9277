from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mirrors.choices import ConnectorKind
from mirrors.models import Mirror
from mirrors.roles import VIEWER, has_role, role_of
from mirrors.services.metrics import latest_point, link_health
from mirrors.services.status import application_status


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


@role_required(VIEWER)
def dashboard(request: HttpRequest) -> HttpResponse:
    mirrors = Mirror.objects.select_related("source", "target").prefetch_related("connectors")
    order = {kind: i for i, kind in enumerate(ConnectorKind.values)}  # the table's column order
    rows = [{"mirror": m, "application": application_status(m), "link": link_health(m),
             "lag": latest_point(m.name, "lag"),
             "connectors": sorted(m.connectors.all(), key=lambda c: order[c.kind])} for m in mirrors]
    return render(request, "frontend/dashboard.html", {"rows": rows, "role": role_of(request.user)})
