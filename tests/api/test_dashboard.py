import re

import pytest
from django.test import Client

from mirrors.models import Cluster, Connector
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db


def test_dashboard_needs_a_login(client: Client):
    response = client.get("/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_dashboard_lists_mirrors_with_connector_states(client: Client, admin_user):
    east = Cluster.objects.create(alias="east", bootstrap_servers="e:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="w:1")
    create_mirror(name="east-to-west", source=east, target=west)
    client.force_login(admin_user)
    page = client.get("/").content.decode()
    assert "east-to-west" in page and "east → west" in page
    assert page.count("UNASSIGNED") == 3
    Connector.objects.filter(kind="source").update(state="RUNNING")
    cells = re.findall(r'class="state state-\w+"[^>]*>(\w+)<', client.get("/").content.decode())
    assert cells == ["RUNNING", "UNASSIGNED", "UNASSIGNED"], "columns: source, checkpoint, heartbeat"


def test_login_form_logs_in(client: Client, admin_user):
    response = client.post("/login/", {"username": "admin", "password": "admin-password-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_dashboard_shows_link_health_and_lag(client: Client, admin_user, monkeypatch):
    from frontend import views

    east = Cluster.objects.create(alias="east", bootstrap_servers="e:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="w:1")
    create_mirror(name="east-to-west", source=east, target=west)
    monkeypatch.setattr(views, "link_health", lambda mirror: {
        "state": "unhealthy", "reason": "no heartbeat from east for 14 s (limit 10 s)", "latency_ms": 812})
    monkeypatch.setattr(views, "latest_point", lambda name, series: {"records": 1234, "seconds": 3.5})
    client.force_login(admin_user)
    page = client.get("/").content.decode()
    assert 'class="link link-unhealthy" title="no heartbeat from east for 14 s (limit 10 s)">unhealthy<' in page
    assert "812 ms" in page and "1234 records" in page
