"""A mirror between secured clusters: SASL_SSL SCRAM-SHA-512 source, mutual-TLS target.

Certificates are generated here. Credentials must never show on a command line, in the driver
log or in Spark's UI; a wrong password fails the connector with the broker's reason.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from controlplane.infra import processes
from mirrorcore.overrides import kafka_system_properties
from mirrors.services import runtime
from mirrors.services.overrides import installation_policy
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "s3cr3t-Mirror-Pa55"


@pytest.fixture(scope="module")
def secured_pair(tmp_path_factory):
    with kafka_tools.secured_clusters(tmp_path_factory, ("sasl", "mtls"), users={"mirror": PASSWORD}) as clusters:
        yield clusters


def spark_ui_text(base: str) -> str:
    """Spark's UI and its REST API for the application: environment and SQL plans (where options show)."""
    apps = json.load(urllib.request.urlopen(f"{base}/api/v1/applications", timeout=10))
    app = apps[0]["id"]
    pages = [f"/api/v1/applications/{app}/environment", f"/api/v1/applications/{app}/sql?details=true",
             "/StreamingQuery/", "/environment/", "/SQL/"]
    return "\n".join(urllib.request.urlopen(base + page, timeout=10).read().decode(errors="replace")
                     for page in pages)


def test_mirror_between_sasl_ssl_and_mtls_clusters(api, control_plane, secured_pair, unique, figures):
    sasl, mtls = secured_pair
    topic, name = f"sec-{unique}", f"sec-{unique}"
    kafka_tools.create_topic(sasl.bootstrap_servers, topic, 2)
    kafka_tools.produce(sasl.bootstrap_servers, topic,
                        {p: [Record(f"{p}-{i}".encode(), b"secret-data", (), 1_700_000_000_000 + i)
                             for i in range(500)] for p in range(2)})
    client = mtls.issue_client_certificate("mirror")
    assert api.post("/api/v1/clusters/", {
        "alias": "sasl", "bootstrap_servers": sasl.listener_address("SASL_SSL"), "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "username": "mirror", "password": PASSWORD, "ca_pem": sasl.ca_pem,
    }, format="json").status_code == 201
    assert api.post("/api/v1/clusters/", {
        "alias": "mtls", "bootstrap_servers": mtls.listener_address("MTLS"), "security_protocol": "SSL",
        "ca_pem": mtls.ca_pem, "cert_pem": client.cert_pem, "key_pem": client.key_pem,
    }, format="json").status_code == 201
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "sasl", "target": "mtls", "topics": topic},
                    format="json").status_code == 201

    received = kafka_tools.consume_all(mtls.bootstrap_servers, f"sasl.{topic}", 1000, timeout=120)
    assert sum(map(len, received.values())) == 1000
    status = wait_for_status(api, name, lambda s: s["connectors"]["heartbeat"]["state"] == "RUNNING"
                             and s["application"]["spark_ui"], 30)
    assert status["connectors"]["source"]["state"] == "RUNNING"

    secrets = [PASSWORD, client.key_pem.splitlines()[1]]
    app = runtime.running_apps()[name]
    command_lines = " ".join(processes.cmdline(pid) for pids in app.groups.values() for pid in pids)
    driver_log = runtime.work_dir(name) / runtime.DRIVER_LOG
    ui = spark_ui_text(status["application"]["spark_ui"])
    for secret in secrets:
        assert secret not in command_lines, "a credential is on a command line"
        assert secret not in driver_log.read_text(errors="replace"), "a credential is in the driver log"
        assert secret not in ui, "a credential is visible in the Spark UI"
    assert "mirror" in ui or "SASL_SSL" in ui, "the UI pages were read"
    for restriction in kafka_system_properties(installation_policy()):  # SCRAM and mTLS work under them
        assert restriction in command_lines, f"the driver JVM runs without {restriction}"
    config_file = runtime.work_dir(name) / runtime.APP_CONFIG
    assert config_file.stat().st_mode & 0o077 == 0, "the application's configuration is private"
    figures(f"SASL_SSL SCRAM-SHA-512 -> mTLS: 1000 records; no credential in {len(ui)} chars of Spark UI, "
            f"{len(command_lines)} chars of command lines or the driver log")


def test_wrong_password_fails_with_an_authentication_error(api, control_plane, secured_pair, unique, figures):
    sasl, mtls = secured_pair
    name = f"badpw-{unique}"
    api.post("/api/v1/clusters/", {
        "alias": "sasl", "bootstrap_servers": sasl.listener_address("SASL_SSL"), "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "username": "mirror", "password": "not-the-password",
        "ca_pem": sasl.ca_pem,
    }, format="json")
    api.post("/api/v1/clusters/", {"alias": "plain", "bootstrap_servers": mtls.bootstrap_servers}, format="json")
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "sasl", "target": "plain", "topics": "x",
                                         "connectors": {"source": {"auto_restart": {"max_restarts": 1}}}},
                    format="json").status_code == 201
    running = wait_for_status(api, name, lambda s: s["application"]["state"] == "running"
                              or s["connectors"]["source"]["state"] == "FAILED", 120)
    started = time.monotonic()
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "FAILED", 120)
    error = status["connectors"]["source"]["error"]
    assert "authentication" in error.lower(), error
    assert "not-the-password" not in error
    heartbeat = status["connectors"]["heartbeat"]
    assert not heartbeat["error"].startswith("TimeoutError"), f"a reason, not a bare timeout: {heartbeat}"
    failed_after = 0.0 if running["connectors"]["source"]["state"] == "FAILED" else time.monotonic() - started
    figures(f"wrong password: FAILED {failed_after:.1f} s after the application ran, with {error[:160]!r}")
