"""One mirror: connector cards with their verbs, graphs, migration readiness and events."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from frontend.views import page, role_required
from mirrors.models import Mirror
from mirrors.roles import VIEWER
from mirrors.services.status import describe

GRAPHS = (  # (key in the graphs API, heading); the API gives each graph's title, unit and empty reason
    ("throughput_records", "Throughput, records/s"),
    ("throughput_bytes", "Throughput, bytes/s"),
    ("lag_records", "Replication lag, records"),
    ("lag_seconds", "Replication lag, seconds"),
    ("heartbeat", "Heartbeat latency"),
    ("checkpoint", "Checkpoint progress"),
    ("tasks", "Tasks by state"),
)
RANGES = (("15m", "15 min"), ("1h", "1 h"), ("24h", "24 h"), ("7d", "7 d"), ("30d", "30 d"))


@role_required(VIEWER)
def mirror_detail(request: HttpRequest, name: str) -> HttpResponse:
    mirror = get_object_or_404(
        Mirror.objects.select_related("source", "target").prefetch_related("connectors"), name=name)
    return page(request, "frontend/mirror.html", {"nav": "mirrors", "mirror": mirror, "status": describe(mirror),
                                                  "graphs": GRAPHS, "ranges": RANGES})
