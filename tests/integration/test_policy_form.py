"""The override policy through the dashboard's forms in a real browser (no Kafka needed): refused Spark and
client properties come back next to their fields, the mirror is left as it was, an allowed key is saved."""

from __future__ import annotations

import pytest

from mirrors.models import Cluster, Mirror
from mirrors.services.mirrors import create_mirror
from tests.integration.browser import log_in, screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def test_refused_properties_are_shown_next_to_their_fields(browse, admin_user):
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:2")
    create_mirror(name="m1", source=east, target=west, spark={"executor_memory": "1g"})
    page = browse()
    log_in(page, "admin", "admin-password-123")
    page.goto("/mirrors/m1/edit/")
    assert "MIRRORPLANE_SPARK_CONF_POLICY=all" in page.locator("#policy-spark").inner_text()
    page.get_by_label("Spark properties").fill("spark.driver.extraJavaOptions=-XX:OnOutOfMemoryError=id\n")
    page.locator("#f-source-other").fill("consumer.interceptor.classes=com.example.Evil\n")
    page.get_by_role("button", name="Save changes").click()
    spark_error = page.locator("#e-spark_conf")
    spark_error.get_by_text("refused because JVM options").wait_for()
    assert "spark.driver.extraJavaOptions" in spark_error.inner_text()
    assert "consumer.interceptor.classes: refused because" in page.locator("#e-source-other").inner_text()
    assert page.get_by_label("Spark properties").get_attribute("aria-invalid") == "true"
    assert "Please fix these 2 problems" in page.locator("#form-errors").inner_text()
    screenshot(page, "mirror-form-refused-properties")
    mirror = Mirror.objects.get(name="m1")
    assert (mirror.generation, mirror.spark) == (1, {"executor_memory": "1g"})

    page.get_by_label("Spark properties").fill("spark.sql.streaming.pollingDelay=250ms\n")
    page.locator("#f-source-other").fill("consumer.fetch.max.bytes=1048576\n")
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url("**/mirrors/m1/")
    mirror = Mirror.objects.get(name="m1")
    assert mirror.spark == {"executor_memory": "1g", "conf": {"spark.sql.streaming.pollingDelay": "250ms"}}
    assert mirror.connectors.get(kind="source").config == {"consumer.fetch.max.bytes": "1048576"}


def test_a_broken_ca_is_shown_next_to_its_field(browse, admin_user):
    page = browse()
    log_in(page, "admin", "admin-password-123")
    page.goto("/clusters/new/")
    page.get_by_label("Alias").fill("north")
    page.get_by_label("Bootstrap servers").fill("127.0.0.1:1")
    page.get_by_label("Security protocol").select_option("SSL")
    page.get_by_label("CA certificate (PEM)").fill(
        "-----BEGIN CERTIFICATE-----\nthis is not base64!\n-----END CERTIFICATE-----\n")
    page.once("dialog", lambda dialog: dialog.accept())  # "save a cluster it cannot reach?"
    page.get_by_role("button", name="Save").click()
    page.locator("#e-ca_pem").get_by_text("not base64").wait_for()
    assert not Cluster.objects.filter(alias="north").exists()
