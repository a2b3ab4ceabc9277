"""The dashboard in a real browser (Debian's Chromium via Playwright) against real clusters and Spark.

One operator's session: log in, create a mirror from the form, watch records flow, pause the
source connector (the card says PAUSED within 5 s and Kafka confirms nothing more arrives),
resume and see the lag return to 0; every graph has points; a viewer sees no action buttons.
The topology with several mirrors between one pair of clusters; the import page's previews.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from mirrors.models import Cluster, Connector, Mirror
from mirrors.services.mirrors import create_mirror
from tests.api.importing import migration_example
from tests.integration import kafka_tools
from tests.integration.browser import log_in, screenshot, unnamed_controls
from tests.integration.test_connector_verbs import Traffic, copied
from tests.integration.test_mirror_end_to_end import create_clusters
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "published"
GRAPHS = ("throughput_records", "throughput_bytes", "lag_records", "lag_seconds", "heartbeat", "checkpoint", "tasks")


def points(page, graph: str) -> int:
    return int(page.locator(f"#graph-{graph}").get_attribute("data-points") or 0)


def last_total(page, graph: str) -> float | None:
    """The newest value of a graph's `total` trace, as plotly holds it."""
    return page.evaluate("""graph => {
        const plot = document.querySelector(`#graph-${graph} .plot`);
        const total = (plot && plot.data || []).find(t => t.name === 'total');
        return total && total.y.length ? total.y[total.y.length - 1] : null;
    }""", graph)


def create_mirror_in_form(page, name: str, topic: str) -> None:
    """Fill the new-mirror form; the live preview must show the topic and its remote name before saving."""
    page.goto("/mirrors/new/")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Source cluster").select_option("east")
    page.get_by_label("Target cluster").select_option("west")
    page.get_by_label("Topics", exact=True).fill(topic)
    page.locator("#preview-body").get_by_text(f"east.{topic}").wait_for(timeout=15_000)
    checkpoint = page.locator("fieldset[data-kind='checkpoint']")
    for prop, value in (("emit.checkpoints.interval.seconds", "1"), ("refresh.groups.interval.seconds", "2")):
        checkpoint.locator(f"[data-property='{prop}']").fill(value)
    page.get_by_role("button", name="Create mirror").click()


class GroupConsumer(threading.Thread):
    """A consumer group on the source reading the topic and committing: the checkpoint graph's subject."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": True, "auto.commit.interval.ms": 500})
        self.topic = topic
        self.halt = threading.Event()

    def run(self) -> None:
        self.consumer.subscribe([self.topic])
        while not self.halt.is_set():
            self.consumer.poll(0.2)
        self.consumer.close()


def test_operator_session_in_the_browser(browse, live_server, api, make_user, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name, group = f"browser-{unique}", f"browser-{unique}", f"app-{unique}"
    remote = f"east.{topic}"
    kafka_tools.create_topic(east, topic, 2)
    create_clusters(api, devstack)
    traffic = Traffic(east, topic)
    traffic.start()
    consumer = GroupConsumer(east, topic, group)
    consumer.start()
    try:
        page = browse()
        log_in(page, "admin", "admin-password-123")
        create_mirror_in_form(page, name, topic)
        page.wait_for_url(f"**/mirrors/{name}/")

        started = time.monotonic()
        wait_for(lambda: points(page, "throughput_records") > 0, 180, "throughput graph gets points", poll=1)
        figures(f"browser: mirror created in the form; throughput graph has points "
                f"{time.monotonic() - started:.1f} s later")
        mode = page.locator("#connector-source #replication-mode")
        mode.wait_for(timeout=10_000)
        assert mode.inner_text() in {"micro-batch (auto)", "real-time (auto)"}, mode.inner_text()
        assert mode.get_attribute("title"), "the card says why the source runs in that mode"
        wait_for(lambda: all(points(page, g) > 0 for g in GRAPHS), 90,
                 "every graph has points: " + ", ".join(f"{g}={points(page, g)}" for g in GRAPHS), poll=1)
        for graph in GRAPHS:  # each plot's axis is the one the graphs API chose
            scale = page.locator(f"#graph-{graph}").get_attribute("data-scale")
            axis = page.evaluate("g => document.querySelector(`#graph-${g} .plot`)._fullLayout.yaxis.type", graph)
            assert (scale, axis) in {("linear", "linear"), ("log", "log")}, (graph, scale, axis)

        # Pause the source connector: the card shows PAUSED within 5 s, and Kafka confirms the pause.
        card = page.locator("#connector-source")
        clicked = time.monotonic()
        card.get_by_role("button", name="Pause the source connector").click()
        page.locator("#connector-source[data-state='PAUSED']").wait_for(timeout=5_000)
        paused_seconds = time.monotonic() - clicked
        before = copied(west, remote)
        time.sleep(4)
        assert copied(west, remote) == before, "records arrived on the target while the source connector was PAUSED"
        assert traffic.sent > 0 and traffic.is_alive(), "the producer kept producing during the pause"

        card.get_by_role("button", name="Resume the source connector").focus()
        page.keyboard.press("Enter")  # the verbs are real buttons: the keyboard works
        page.locator("#connector-source[data-state='RUNNING']").wait_for(timeout=10_000)
        traffic.stop()
        sent = traffic.sent
        wait_for(lambda: copied(west, remote) >= sent, 60, "every record is on the target after the resume")
        wait_for(lambda: last_total(page, "lag_records") == 0, 60, "the lag graph returns to 0", poll=1)
        screenshot(page, "mirror-detail")  # a minute of history: traffic, the pause, the catch-up
        # Stop asks first; cancelling changes nothing.
        page.locator("#connector-heartbeat").get_by_role("button", name="Stop the heartbeat connector").click()
        page.locator("dialog#confirm").wait_for(state="visible")
        page.get_by_role("button", name="Cancel").click()
        page.locator("dialog#confirm").wait_for(state="hidden")
        heartbeat = api.get(f"/api/v1/mirrors/{name}/status/").json()["connectors"]["heartbeat"]
        assert heartbeat["desired_state"] == "running", "cancelling the stop dialog stopped the connector"

        phone = browse(390, 844)
        log_in(phone, "admin", "admin-password-123")
        for path in (f"/mirrors/{name}/", "/", "/mirrors/", "/clusters/", f"/mirrors/{name}/edit/", "/clusters/new/",
                     "/import/", "/events/"):
            phone.goto(path)
            phone.wait_for_load_state("networkidle")
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{path} scrolls sideways on a 390-px phone ({width} px wide)"
            assert unnamed_controls(phone) == [], f"{path}: controls without an accessible name"
        phone.goto(f"/mirrors/{name}/")
        phone.locator("#graph-throughput_records .main-svg").first.wait_for()
        screenshot(phone, "mirror-detail-phone")
        figures(f"browser: PAUSED shown {paused_seconds:.2f} s after the click; no record arrived in 4 s "
                f"of pause; {sent} records all on the target after resume; lag graph back to 0")
    finally:
        traffic.stop()
        consumer.halt.set()

    make_user("vera", "viewer")
    viewer = browse()
    log_in(viewer, "vera", "vera-password-123")
    viewer.goto(f"/mirrors/{name}/")
    viewer.locator("#connector-source").wait_for()
    assert viewer.locator(".connector button").count() == 0, "a viewer sees action buttons"
    assert viewer.get_by_role("link", name="Edit").count() == 0
    viewer.goto("/")
    viewer.locator("#topology .cluster").first.wait_for()
    screenshot(viewer, "overview")


LABEL_BOXES = """() => Array.from(document.querySelectorAll('#topology .edge-label')).map(text => {
    const box = text.getBoundingClientRect();
    return {text: text.textContent, left: box.left, right: box.right, top: box.top, bottom: box.bottom};
})"""


def disjoint(a: dict, b: dict) -> bool:
    return a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]


def test_topology_with_several_mirrors_between_one_pair_of_clusters(browse, admin_user):
    """8 mirrors east -> west and 3 west -> east: two edges, two labels that do not overlap; a click on the
    edge of several mirrors marks their rows in the table. Their connectors are stopped: nothing runs them."""
    east, west = (Cluster.objects.create(alias=alias, bootstrap_servers="127.0.0.1:1") for alias in ("east", "west"))
    flows = [(f"orders-{i}", east, west) for i in range(8)] + [(f"back-{i}", west, east) for i in range(3)]
    for name, source, target in flows:
        Connector.objects.filter(mirror=create_mirror(name=name, source=source, target=target)).update(
            desired_state="stopped")
    page = browse(1280, 800)
    log_in(page, "admin", "admin-password-123")
    page.goto("/")
    page.locator("#topology .edge-label").nth(1).wait_for()
    labels = page.evaluate(LABEL_BOXES)
    assert sorted(label["text"] for label in labels) == ["3 mirrors · all stopped", "8 mirrors · all stopped"]
    assert disjoint(*labels), f"the labels overlap: {labels}"
    screenshot(page, "overview-several-mirrors-per-pair")

    east_to_west = next(i for i, label in enumerate(labels) if label["text"].startswith("8 "))
    marker = page.locator("#topology .edge-marker").nth(east_to_west)
    marker.hover()
    tip = page.locator("#topology .topology-tip")
    tip.get_by_text("east → west: 8 mirrors").wait_for()
    assert "● orders-0: stopped" in tip.inner_text()
    marker.click()
    wait_for(lambda: page.locator("#links tr.selected").count() == 8, 5, "the 8 mirrors east → west are marked")
    assert page.locator("#links tr.selected a").all_inner_texts() == [f"orders-{i}" for i in range(8)]


def test_import_preview_in_the_browser(browse, admin_user):
    """Strimzi's consumer-first migration resource: the dry run shows what would be created."""

    page = browse()
    log_in(page, "admin", "admin-password-123")
    page.goto("/import/")
    result = page.locator("#result")
    # As copied from the web page, one line is wrapped: the preview names it and nothing can be imported.
    page.get_by_label("Configuration").fill((FIXTURES / "004_kafkamirrormaker2_example1_migration.yaml").read_text())
    assert page.get_by_role("button", name="Import").is_disabled(), "Import before a preview"
    page.get_by_role("button", name="Preview").click()
    result.get_by_text("line 76").wait_for()
    assert page.get_by_role("button", name="Import").is_disabled()

    # Unwrapped, and with the target's client properties spelt as Kafka spells them (as published,
    # the override policy refuses the misspelt ones, as the API tests show).
    page.get_by_label("Configuration").fill(migration_example())
    page.get_by_role("button", name="Preview").click()
    result.get_by_text("my-source-cluster").first.wait_for()
    text = result.inner_text()
    assert "create" in text.lower() and "my-source-cluster" in text and "my-target-cluster" in text
    assert page.get_by_role("button", name="Import").is_enabled()
    screenshot(page, "import-preview")
    assert not Mirror.objects.exists() and not Cluster.objects.exists(), "a preview created something"


def test_import_preview_lists_the_resources_it_ignores(browse, admin_user):
    """Strimzi's multi-document SCRAM example: the mirror, the passwords it needs, and the other resources."""
    page = browse()
    log_in(page, "admin", "admin-password-123")
    page.goto("/import/")
    page.get_by_label("Configuration").fill((FIXTURES / "005_kafkamirrormaker2_example5_scram_sha_512_auth.yaml")
                                            .read_text())
    page.get_by_role("button", name="Preview").click()
    result = page.locator("#result")
    result.get_by_text("Other resources in the file (ignored)").wait_for()
    text = result.inner_text()
    for resource in ("KafkaNodePool source", "Kafka cluster-a", "KafkaUser cluster-b-user", "my-mirror-maker-2"):
        assert resource in text, resource
    assert page.get_by_label("cluster-b: password").is_visible(), "the secret the file refers to is asked for"
    assert unnamed_controls(page) == []
    assert not Mirror.objects.exists() and not Cluster.objects.exists(), "a preview created something"


def test_import_preview_adopting_a_running_mm2_names_the_flow_without_offsets(browse, admin_user):
    """With “Adopt”, a flow whose MM2 offsets cannot be read stops the preview, naming it and why."""
    page = browse()
    log_in(page, "admin", "admin-password-123")
    page.goto("/import/")
    page.get_by_label("Configuration").fill("clusters = east, west\neast.bootstrap.servers = 127.0.0.1:1\n"
                                            "west.bootstrap.servers = 127.0.0.1:2\neast->west.enabled = true\n")
    page.get_by_label("Adopt the running MirrorMaker 2 this file describes").check()
    page.get_by_role("button", name="Preview").click()
    result = page.locator("#result")
    result.get_by_text("adopt.east-to-west").wait_for()
    assert "cannot read MM2's offsets" in result.inner_text()
    assert "untick “Adopt”" in result.inner_text()
    assert page.get_by_role("button", name="Import").is_disabled()
    assert unnamed_controls(page) == []
    assert not Mirror.objects.exists() and not Cluster.objects.exists(), "a preview created something"
