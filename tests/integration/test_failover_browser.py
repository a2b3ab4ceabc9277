"""The failover page in a real browser: readiness, the confirm step, the per-group result, then the failback.

Kafka is the in-memory double of the API tests (the verbs' Kafka work is covered on real clusters by
test_failover.py); what is tested here is the page: its steps, its dialogs and what it shows.
"""

from __future__ import annotations

import pytest

from mirrorcore.formats import OffsetSync
from mirrors.models import Cluster, Event, Failover, Mirror
from mirrors.services import failback as failback_service
from mirrors.services import failover as failover_service
from mirrors.services.mirrors import create_mirror
from tests.api.test_failover_api import FakeClusters
from tests.integration.browser import log_in, screenshot, unnamed_controls

pytestmark = pytest.mark.django_db(transaction=True)


def test_operator_fails_over_and_back_from_the_page(browse, make_user, fake_redis, monkeypatch):
    kafka = FakeClusters()
    kafka.flows["east-to-west"] = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 100, 100)]
    kafka.offsets[("east", "billing")] = {("orders", 0): 150}
    for module in (failover_service, failback_service):
        monkeypatch.setattr(module, "GroupClusters", lambda *a, **k: kafka)
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:2")
    create_mirror(name="east-to-west", source=east, target=west, topics="orders")
    make_user("olga", "operator")

    page = browse()
    log_in(page, "olga", "olga-password-123")
    page.goto("/mirrors/east-to-west/")
    page.get_by_role("link", name="Failover and failback").click()
    page.wait_for_url("**/mirrors/east-to-west/failover/")
    page.locator("#drained").wait_for()
    assert page.locator("#drained").inner_text() == "Not drained"
    assert "topics caught up: 0 of 0" in page.locator("#readiness-figures").inner_text()
    assert page.get_by_role("button", name="Fail back…").is_disabled(), "nothing to fail back yet"

    # Fail over: a confirm step first; Cancel changes nothing.
    page.get_by_label("Force: fail over at once, without waiting").check()
    page.get_by_role("button", name="Fail over…").click()
    dialog = page.locator("dialog#confirm")
    assert dialog.is_visible() and "at once, whether or not east is drained" in dialog.inner_text()
    page.get_by_role("button", name="Cancel").click()
    assert not Failover.objects.exists() and not Event.objects.filter(action="failover").exists()

    page.get_by_role("button", name="Fail over…").click()
    page.locator("#confirm-ok").click()
    row = page.locator('#failover-result tr[data-group="billing"]')
    row.wait_for()
    assert row.get_attribute("data-status") == "synced"
    assert row.locator(".start-offset").inner_text() == "101"
    assert page.locator("#phase").inner_text().startswith("Failed over")
    assert page.get_by_role("button", name="Fail over…").is_disabled()

    # Fail back, also after a confirm step: the reverse mirror is named and linked.
    kafka.offsets[("west", "billing")] = {("east.orders", 0): 140}
    page.get_by_role("button", name="Fail back…").click()
    assert "west-failback (west → east)" in page.locator("#confirm-text").inner_text()
    page.locator("#confirm-ok").click()
    page.locator("#reverse-link a").wait_for()
    assert page.locator("#reverse-link a").inner_text() == "east-to-west-failback"
    page.locator('#failback-result tr[data-group="billing"][data-status="synced"]').wait_for()
    assert Mirror.objects.filter(name="east-to-west-failback").exists()
    # A completed cycle offers neither verb, and says what comes next.
    page.locator("#cycle-done").wait_for()
    assert "Resume it there" in page.locator("#cycle-done").inner_text()
    assert page.get_by_role("button", name="Fail over…").is_disabled()
    assert page.get_by_role("button", name="Fail back…").is_disabled()
    assert unnamed_controls(page) == []
    screenshot(page, "failover")
