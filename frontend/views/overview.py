"""The overview: every link's health at a glance, and what needs attention."""

from django.http import HttpRequest, HttpResponse

from frontend.views import page, role_required
from mirrors.roles import VIEWER
from mirrors.services.overview import overview as overview_data


@role_required(VIEWER)
def overview(request: HttpRequest) -> HttpResponse:
    """Rendered with the data inline (no second round trip); overview.js keeps it live from the API."""
    return page(request, "frontend/overview.html", {"nav": "overview", "data": overview_data()})
