"""The global events timeline: who did what, state transitions, errors."""

from django.http import HttpRequest, HttpResponse

from frontend.views import page, role_required
from mirrors.roles import VIEWER


@role_required(VIEWER)
def events(request: HttpRequest) -> HttpResponse:
    return page(request, "frontend/events.html", {"nav": "events", "mirror": None})
