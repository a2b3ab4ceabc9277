"""The overview, mirror detail and events pages: rendered server-side, role-aware, plotly served locally."""

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from mirrors.models import Cluster, Connector
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db


@pytest.fixture
def mirror(db):
    east = Cluster.objects.create(alias="east", bootstrap_servers="e:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="w:1")
    return create_mirror(name="east-to-west", source=east, target=west)


def login(client: Client, make_user, role: str) -> Client:
    client.force_login(make_user(f"user-{role}", role))
    return client


@pytest.mark.parametrize("path", ["/", "/mirrors/east-to-west/", "/events/"])
def test_pages_need_a_login(client: Client, mirror, path):
    response = client.get(path)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_overview_draws_the_topology_from_inline_data(client: Client, make_user, mirror, fake_redis):
    page = login(client, make_user, "viewer").get("/").content.decode()
    data = json.loads(re.search(r'<script id="overview-data" type="application/json">(.*?)</script>', page, re.S)[1])
    assert [m["name"] for m in data["mirrors"]] == ["east-to-west"]
    assert {c["alias"] for c in data["clusters"]} == {"east", "west"}
    # The landing page draws its topology in plain SVG: no 4.8 MB charting library to parse on every load.
    assert "plotly" not in page and "/static/frontend/js/overview.js" in page and "cdn" not in page.lower()
    assert 'href="/mirrors/east-to-west/"' in page, "the links table names every mirror for keyboards and readers"


def test_plotly_is_served_from_the_installed_package(client: Client):
    found = finders.find("vendor/plotly.min.js")
    assert found and found.endswith("plotly/package_data/plotly.min.js")
    listed = [(storage.prefix, path) for path, storage in finders.get_finder(
        "frontend.staticfiles.PlotlyFinder").list([])]
    assert listed == [("vendor", "plotly.min.js")], "collectstatic copies it to vendor/plotly.min.js"


@pytest.mark.parametrize("role, buttons", [("viewer", False), ("operator", True), ("admin", True)])
def test_mirror_page_offers_verbs_only_to_operators(client: Client, make_user, mirror, fake_redis, role, buttons):
    page = login(client, make_user, role).get("/mirrors/east-to-west/").content.decode()
    assert f'data-can-operate="{"true" if buttons else "false"}"' in page
    assert ('href="/mirrors/east-to-west/edit/"' in page) == (role == "admin")
    status = json.loads(re.search(r'<script id="status-data" type="application/json">(.*?)</script>', page, re.S)[1])
    assert set(status["connectors"]) == {"source", "checkpoint", "heartbeat"}
    for graph in ("throughput_records", "throughput_bytes", "lag_records", "lag_seconds", "heartbeat", "checkpoint",
                  "tasks"):
        assert f'id="graph-{graph}"' in page
    assert '/static/vendor/plotly.min.js' in page and "cdn" not in page.lower(), "the graphs' plotly.js, served here"


def test_mirror_page_shows_a_failed_connector_error_in_its_status(client: Client, make_user, mirror, fake_redis):
    Connector.objects.filter(kind="source").update(state="FAILED", error="topic 'orders' is not authorized")
    page = login(client, make_user, "viewer").get("/mirrors/east-to-west/").content.decode()
    assert "topic &#x27;orders&#x27; is not authorized" in page or "topic 'orders' is not authorized" in page


def test_unknown_mirror_is_404(client: Client, make_user):
    assert login(client, make_user, "viewer").get("/mirrors/nope/").status_code == 404


def test_events_page_and_nav(client: Client, make_user):
    page = login(client, make_user, "viewer").get("/events/").content.decode()
    assert 'href="/events/" aria-current="page"' in page
    assert 'href="/import/"' not in page, "viewers are not offered the import page"
    admin_page = Client()
    admin_page.force_login(make_user("boss", "admin"))
    assert 'href="/import/"' in admin_page.get("/events/").content.decode()
