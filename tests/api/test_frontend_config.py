"""The dashboard's configuration pages: clusters, mirrors, their forms, import; who sees what."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from frontend.views import config
from mirrors.models import Cluster, Connector
from mirrors.roles import ADMIN, OPERATOR, VIEWER
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db

PASSWORD = "cluster-pw-never-shown"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQ-never-shown\n-----END PRIVATE KEY-----\n"
LIST_PAGES = ["/clusters/", "/mirrors/"]
ADMIN_PAGES = ["/clusters/new/", "/clusters/east/edit/", "/mirrors/new/", "/mirrors/east-to-west/edit/", "/import/"]


@pytest.fixture
def world():
    east = Cluster.objects.create(alias="east", bootstrap_servers="e:9093", security_protocol="SASL_SSL",
                                  sasl_mechanism="SCRAM-SHA-512", username="mm2", password=PASSWORD,
                                  cert_pem="-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n",
                                  key_pem=KEY, config={"request.timeout.ms": "20000"})
    west = Cluster.objects.create(alias="west", bootstrap_servers="w:9092")
    return create_mirror(name="east-to-west", source=east, target=west, topics="orders, payments.*",
                         connectors={"source": {"tasks_max": 3, "config": {
                             "refresh.topics.interval.seconds": "30", "producer.override.linger.ms": "10"}},
                             "checkpoint": {"config": {"sync.group.offsets.enabled": "true"}},
                             "heartbeat": {"auto_restart": {"enabled": False, "max_restarts": 2}}})


def as_user(make_user, role: str) -> Client:
    client = Client()
    client.force_login(make_user(f"page-{role}", role))
    return client


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


@pytest.mark.parametrize("path", LIST_PAGES + ADMIN_PAGES)
def test_pages_need_a_login(client: Client, world, path):
    response = client.get(path)
    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize("path", LIST_PAGES)
@pytest.mark.parametrize("role", [VIEWER, OPERATOR, ADMIN])
def test_lists_render_for_every_role(make_user, world, role, path):
    page = text(as_user(make_user, role).get(path))
    assert "east" in page and 'aria-current="page"' in page


@pytest.mark.parametrize("path", ADMIN_PAGES)
def test_form_pages_are_for_admins(make_user, world, path):
    for role in (VIEWER, OPERATOR):
        response = as_user(make_user, role).get(path)
        assert response.status_code == 403 and "admin role" in response.content.decode()
    assert as_user(make_user, ADMIN).get(path).status_code == 200


@pytest.mark.parametrize("path", ["/clusters/nope/edit/", "/mirrors/nope/edit/"])
def test_editing_what_does_not_exist_is_404(admin_user, client: Client, path):
    client.force_login(admin_user)
    assert client.get(path).status_code == 404


def test_a_viewer_gets_no_edit_controls(make_user, world):
    viewer = as_user(make_user, VIEWER)
    mirrors, clusters = text(viewer.get("/mirrors/")), text(viewer.get("/clusters/"))
    assert "New mirror" not in mirrors and "/edit/" not in mirrors and "/mirrors/new/" not in mirrors
    assert "New cluster" not in clusters and "/edit/" not in clusters
    assert 'data-alias="east"' in clusters and "checking…" in clusters, "viewers see reachability too"
    assert "/import/" not in mirrors + clusters


def test_an_admin_gets_new_and_edit_controls(admin_user, client: Client, world):
    client.force_login(admin_user)
    mirrors, clusters = text(client.get("/mirrors/")), text(client.get("/clusters/"))
    assert 'href="/mirrors/new/"' in mirrors and 'href="/mirrors/east-to-west/edit/"' in mirrors
    assert 'href="/clusters/new/"' in clusters and 'href="/clusters/east/edit/"' in clusters
    assert 'aria-label="Edit cluster east"' in clusters and "clusters.js" in clusters
    assert 'data-alias="east"' in clusters and "checking…" in clusters


def test_cluster_list_shows_address_security_and_mirror_counts(admin_user, client: Client, world):
    client.force_login(admin_user)
    rows = dict(re.findall(r'<tr data-alias="(\w+)">(.*?)</tr>', text(client.get("/clusters/")), re.S))
    assert "e:9093" in rows["east"] and "SASL_SSL" in rows["east"] and "1 out, 0 in" in rows["east"]
    assert "0 out, 1 in" in rows["west"]


def test_cluster_edit_form_never_contains_a_stored_secret(admin_user, client: Client, world):
    client.force_login(admin_user)
    page = text(client.get("/clusters/east/edit/"))
    assert PASSWORD not in page and "MIIEvQ" not in page and "never-shown" not in page
    assert page.count('placeholder="set — leave empty to keep"') == 2  # the password and the key
    assert "Remove the stored password" in page and "Remove the stored key" in page
    assert 'value="e:9093"' in page and 'value="mm2"' in page and "request.timeout.ms=20000" in page
    assert re.search(r'<option value="SASL_SSL" selected>', page)
    assert re.search(r'<option value="SCRAM-SHA-512" selected>', page)
    assert re.search(r'id="f-alias" name="alias" value="east" readonly', page)


def test_new_cluster_form_is_empty(admin_user, client: Client):
    client.force_login(admin_user)
    page = text(client.get("/clusters/new/"))
    assert "set — leave empty to keep" not in page and "Test connection" in page and "readonly" not in page


def test_mirror_edit_form_is_filled_in(admin_user, client: Client, world):
    client.force_login(admin_user)
    page = text(client.get("/mirrors/east-to-west/edit/"))
    assert 'id="f-name" name="name" value="east-to-west" readonly' in page
    assert '<option value="east" selected>' in page and '<option value="west" selected>' in page
    assert 'value="orders, payments.*"' in page
    assert re.search(r'id="f-source-tasks_max"[^>]*value="3"', page)
    assert re.search(r'data-property="refresh.topics.interval.seconds" value="30"', page)
    other = re.search(r'id="f-source-other"[^>]*>([^<]*)</textarea>', page).group(1)
    assert other == "producer.override.linger.ms=10\n"  # the settings with their own field are not repeated
    sync = re.search(r'data-property="sync.group.offsets.enabled".*?</select>', page, re.S).group(0)
    assert '<option value="true" selected>' in sync
    heartbeat = re.search(r'data-kind="heartbeat".*?</fieldset>', page, re.S).group(0)
    assert "data-auto-restart checked" not in heartbeat and re.search(r'max_restarts"[^>]*value="2"', heartbeat)
    assert "tasks_max" not in heartbeat  # MM2's tasks.max goes to the source and checkpoint connectors


def test_new_mirror_form_has_mm2_defaults_and_the_clusters(admin_user, client: Client, world):
    client.force_login(admin_user)
    page = text(client.get("/mirrors/new/"))
    assert 'id="f-topics" name="topics" value=".*"' in page
    assert r'value=".*[\-\.]internal, .*\.replica, __.*"' in page
    assert '<option value="east">' in page and '<option value="west">' in page
    assert 'id="preview-status"' in page and "Create mirror" in page


def test_the_mirror_forms_property_fields_take_their_defaults_and_help_from_the_registry(admin_user, client: Client):
    from frontend.views.config import CONNECTOR_SETTINGS
    from mirrorcore import registry

    client.force_login(admin_user)
    page = text(client.get("/mirrors/new/"))
    for kind, settings in CONNECTOR_SETTINGS.items():
        for setting in settings:
            prop = registry.get(setting.name)
            assert prop.owner in (kind, "worker") and prop.acted_on
            field = re.search(rf'data-property="{re.escape(setting.name)}".*?</small>', page, re.S).group(0)
            assert prop.doc.replace("'", "&#x27;") in field
            if prop.type == "boolean":
                assert f"default ({'on' if prop.effective_default == 'true' else 'off'})" in field
            else:
                assert f'placeholder="{prop.effective_default}"' in field
    assert 'data-property="replication.factor" value="" placeholder="-1"' in page  # the broker's, not MM2's 2


def test_import_page_has_the_preview_and_import_buttons(admin_user, client: Client):
    client.force_login(admin_user)
    page = text(client.get("/import/"))
    assert 'id="preview"' in page and 'id="apply"' in page and 'type="file"' in page and "import.js" in page


def test_every_control_has_an_accessible_name(admin_user, client: Client, world):
    """Each input, select and textarea is labelled (a <label for>, a wrapping label, or aria-label)."""
    client.force_login(admin_user)
    for path in LIST_PAGES + ADMIN_PAGES:
        page = text(client.get(path))
        labelled = set(re.findall(r'<label for="([^"]+)"', page))
        for tag in re.finditer(r"<(input|select|textarea)\b([^>]*)>", page):
            attributes = tag.group(2)
            if 'type="hidden"' in attributes or "aria-label=" in attributes:
                continue
            field_id = re.search(r'\bid="([^"]+)"', attributes)
            wrapped = page.rfind("<label", 0, tag.start()) > page.rfind("</label>", 0, tag.start())
            assert wrapped or (field_id and field_id.group(1) in labelled), (path, tag.group(0))


def test_static_files_of_the_pages_exist():
    for path in ("frontend/forms.css", "frontend/js/forms.js", "frontend/js/clusters.js", "frontend/js/mirrors.js",
                 "frontend/js/import.js"):
        assert finders.find(path), path


# -- the mirrors list (was the dashboard's table) --------------------------------------------------

def test_mirrors_list_shows_connector_states(admin_user, client: Client, world):
    client.force_login(admin_user)
    page = text(client.get("/mirrors/"))
    assert "east-to-west" in page and "east → west" in page and 'href="/mirrors/east-to-west/"' in page
    assert page.count(">UNASSIGNED<") == 3
    Connector.objects.filter(kind="source").update(state="RUNNING")
    cells = re.findall(r'class="state state-\w+"[^>]*>(\w+)<', text(client.get("/mirrors/")))
    assert cells == ["RUNNING", "UNASSIGNED", "UNASSIGNED"], "columns: source, checkpoint, heartbeat"


def test_mirrors_list_shows_health_link_latency_lag_and_tasks(admin_user, client: Client, world, monkeypatch):
    row = {"name": "east-to-west", "source": "east", "target": "west", "health": "degraded",
           "reason": "link unhealthy: no heartbeat from east for 14 s (limit 10 s)", "application": "running",
           "link": "unhealthy", "latency_ms": 812, "lag_records": 1234, "lag_seconds": 3.5,
           "url": "/mirrors/east-to-west/",
           "connectors": {"source": {"state": "RUNNING", "desired_state": "running", "tasks": 2, "error": None},
                          "checkpoint": {"state": "FAILED", "desired_state": "running", "tasks": 1, "error": "boom"},
                          "heartbeat": {"state": "PAUSED", "desired_state": "paused", "tasks": 0, "error": None}}}
    monkeypatch.setattr(config, "overview_data", lambda: {"mirrors": [row]})
    client.force_login(admin_user)
    page = text(client.get("/mirrors/"))
    assert 'class="health health-degraded" title="link unhealthy: no heartbeat from east for 14 s (limit 10 s)"' in page
    assert 'class="link link-unhealthy">unhealthy<' in page
    assert "812 ms" in page and "1234 records" in page and "3.5 s" in page
    assert 'data-cell="application">running<' in page
    assert "2 tasks" in page and "1 task<" in page and "0 tasks" in page
    assert 'class="state state-failed" title="boom">FAILED<' in page


def test_mirrors_list_without_mirrors_says_how_to_start(make_user, admin_user, client: Client):
    client.force_login(admin_user)
    assert "No mirror yet." in text(client.get("/mirrors/")) and "/import/" in text(client.get("/mirrors/"))
    assert "/mirrors/new/" not in text(as_user(make_user, VIEWER).get("/mirrors/"))
