from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mirrors.models import Mirror
from mirrors.services.status import application_status


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    mirrors = Mirror.objects.select_related("source", "target").prefetch_related("connectors")
    rows = [{"mirror": m, "application": application_status(m), "connectors": list(m.connectors.all())}
            for m in mirrors]
    return render(request, "frontend/dashboard.html", {"rows": rows})
