"""A mirror's failover and failback, step by step: readiness, confirm, the per-group result."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from frontend.views import page, role_required
from mirrors.models import Mirror
from mirrors.roles import VIEWER
from mirrors.services import failover
from mirrors.services.failover_plan import loop_reason, reverse_name


@role_required(VIEWER)
def failover_page(request: HttpRequest, name: str) -> HttpResponse:
    mirror = get_object_or_404(Mirror.objects.select_related("source", "target"), name=name)
    return page(request, "frontend/failover.html", {
        "nav": "mirrors", "mirror": mirror, "reverse_name": reverse_name(mirror.name),
        "loop": loop_reason(mirror.replication_policy, mirror.source.alias, mirror.target.alias),
        "timeout": int(failover.DEFAULT_TIMEOUT_SECONDS), "idle_seconds": int(failover.DEFAULT_IDLE_SECONDS)})
