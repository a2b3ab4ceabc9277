"""The failover page: linked from the mirror's page, role-aware, and its session posts reach the API (CSRF)."""

from __future__ import annotations

import pytest
from django.test import Client

from mirrorcore.formats import OffsetSync
from mirrors.models import Cluster, Failover, Mirror
from mirrors.services.mirrors import create_mirror
from tests.api.test_failover_api import FakeClusters, kafka  # noqa: F401 - the Kafka double's fixture

pytestmark = pytest.mark.django_db

PAGE = "/mirrors/east-to-west/failover/"


@pytest.fixture
def mirror(db) -> Mirror:
    east = Cluster.objects.create(alias="east", bootstrap_servers="e:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="w:1")
    return create_mirror(name="east-to-west", source=east, target=west, topics="orders")


def login(make_user, role: str, **options) -> Client:
    client = Client(**options)
    client.force_login(make_user(f"user-{role}", role))
    return client


def test_the_page_needs_a_login(client: Client, mirror):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_mirror_page_links_to_it(make_user, mirror, fake_redis):
    page = login(make_user, "viewer").get("/mirrors/east-to-west/").content.decode()
    assert f'href="{PAGE}"' in page


def test_viewers_see_the_steps_without_buttons(make_user, mirror):
    response = login(make_user, "viewer").get(PAGE)
    page = response.content.decode()
    assert response.status_code == 200
    for step in ("1. Readiness", "2. Fail over to west", "3. Fail back to east"):
        assert step in page
    assert 'id="failover-button"' not in page and 'id="failback-button"' not in page
    assert 'data-reverse="east-to-west-failback"' in page and "frontend/js/failover.js" in page


def test_operators_get_the_form_and_a_confirm_step(make_user, mirror):
    page = login(make_user, "operator").get(PAGE).content.decode()
    assert 'id="failover-button"' in page and 'id="failback-button"' in page
    assert '<dialog id="confirm"' in page and 'id="confirm-ok"' in page, "each verb asks first"
    assert 'name="timeout"' in page and 'name="force"' in page and 'id="loop"' not in page


def test_a_mirror_that_would_loop_says_so(make_user, mirror):
    Mirror.objects.filter(pk=mirror.pk).update(replication_policy="identity")
    page = login(make_user, "operator").get(PAGE).content.decode()
    assert 'id="loop"' in page and "would copy them back" in page


def test_unknown_mirror_is_a_404(make_user, mirror):
    assert login(make_user, "viewer").get("/mirrors/nope/failover/").status_code == 404


def test_the_pages_session_posts_the_verbs_with_its_csrf_token(make_user, mirror, kafka):  # noqa: F811
    kafka.flows["east-to-west"] = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 40, 40)]
    kafka.offsets[("east", "billing")] = {("orders", 0): 41}
    client = login(make_user, "operator", enforce_csrf_checks=True)
    client.get(PAGE)
    token = client.cookies["csrftoken"].value
    url = "/api/v1/mirrors/east-to-west/failover/"
    assert client.post(url, {"force": True}, content_type="application/json").status_code == 403, "no CSRF token"
    assert not Failover.objects.exists()

    response = client.post(url, {"force": True, "timeout": 60, "idle_seconds": 30}, content_type="application/json",
                           HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200, response.content
    [group] = response.json()["groups"]
    assert (group["group"], group["status"], group["offsets"][0]["offset"]) == ("billing", "synced", 41)
    assert client.get(url).json()["phase"] == "failed_over"

    response = client.post("/api/v1/mirrors/east-to-west/failback/", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200 and response.json()["reverse_mirror"]["name"] == "east-to-west-failback"
