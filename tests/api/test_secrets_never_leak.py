"""A stored password or private key never comes back: not in API responses (any GET of the schema, writes,
errors), events, exports, the dashboard, nor in log lines; and the database holds only ciphertext."""

from __future__ import annotations

import logging
import re

import pytest
from django.db import connection
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from mirrors.models import Event
from tests import pem

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Zq7-never-show-me-4711"
KEY_PEM = pem.client().key_pem  # parsed when stored: a real key, whose body is the canary
KEY_BODY = pem.key_body(KEY_PEM)
CERT_PEM = pem.client().cert_pem
USER_PASSWORD = "user-pw-canary-0815-xyz"
SECRETS = (PASSWORD, KEY_BODY, USER_PASSWORD)
PATH_VALUES = {"alias": "east", "name": "east-to-west", "kind": "source", "task": "0", "username": "vera"}
LOGGERS = ("", "mirrors", "spark_runtime", "django", "django.request", "celery")


@pytest.fixture
def all_logs(caplog):
    """Every log record at DEBUG, also of loggers that do not propagate to the root (mirrors)."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    saved = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        if logger.name != "root":
            logger.addHandler(caplog.handler)
    yield caplog
    for logger, level in saved:
        logger.setLevel(level)
        logger.removeHandler(caplog.handler)


def _assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} contains a secret"


def _get_paths() -> list[str]:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return sorted(p for p, item in paths.items() if "get" in item)


def test_no_response_event_log_or_export_contains_a_stored_secret(api, all_logs, admin_user, kafka_unreachable):
    bodies: list[tuple[str, str]] = []

    def keep(what: str, response) -> None:
        bodies.append((what, response.content.decode(errors="replace")))
        for header, value in response.items():
            bodies.append((f"{what} header {header}", value))

    keep("create east", api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "127.0.0.1:1", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "username": "mirror", "password": PASSWORD,
        "cert_pem": CERT_PEM, "key_pem": KEY_PEM}, format="json"))
    keep("create west", api.post("/api/v1/clusters/", {
        "alias": "west", "bootstrap_servers": "127.0.0.1:2", "security_protocol": "SSL",
        "cert_pem": CERT_PEM, "key_pem": KEY_PEM}, format="json"))
    assert bodies[0][1].count('"has_password":true') == 1 and '"has_key":true' in bodies[0][1]
    keep("update east", api.patch("/api/v1/clusters/east/", {"password": PASSWORD, "config": {"acks": "all"}},
                                  format="json"))
    broken_key = KEY_PEM.replace("\n-----END", "!\n-----END")  # not base64; its first line is the canary
    broken = api.patch("/api/v1/clusters/west/", {"key_pem": broken_key}, format="json")
    other = api.patch("/api/v1/clusters/west/", {"key_pem": pem.client("other").key_pem}, format="json")
    keep("broken key", broken)
    keep("someone else's key", other)
    assert broken.status_code == other.status_code == 400 and "key_pem" in broken.json() and "key_pem" in other.json()
    keep("invalid update", api.patch("/api/v1/clusters/east/", {"security_protocol": "PLAINTEXT",
                                                                "key_pem": KEY_PEM}, format="json"))
    keep("mirror", api.post("/api/v1/mirrors/", {"name": "east-to-west", "source": "east", "target": "west"},
                            format="json"))
    keep("user", api.post("/api/v1/users/", {"username": "vera", "role": "viewer", "password": USER_PASSWORD},
                          format="json"))
    keep("check", api.post("/api/v1/clusters/east/check/"))
    keep("translate", api.get("/api/v1/offsets/translate/", {"group": "g", "source": "east", "target": "west"}))
    keep("pause", api.put("/api/v1/mirrors/east-to-west/connectors/source/pause/"))

    for path in _get_paths():
        url = re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "x"), path)
        keep(f"GET {url}", api.get(url))
        keep(f"GET {url} (series)", api.get(url, {"series": "lag"}))
    for export in ("strimzi", "properties"):  # once the export exists
        response = api.get("/api/v1/mirrors/east-to-west/export/", {"format": export})
        if response.status_code != 404:
            keep(f"export {export}", response)
    dashboard = Client()
    dashboard.force_login(admin_user)
    keep("dashboard", dashboard.get("/"))

    assert len(bodies) > 20
    for what, text in bodies:
        _assert_clean(what, text)
    for event in Event.objects.all():
        _assert_clean(f"event {event}", " ".join(str(v) for v in vars(event).values()))
    assert all_logs.records, "the test should capture the log"
    for record in all_logs.records:
        _assert_clean(f"log line {record.name}", record.getMessage() + str(record.args) + str(record.exc_text))
    _assert_clean("log", all_logs.text)


def test_the_database_holds_ciphertext(api):
    assert api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9092", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "PLAIN", "username": "u", "password": PASSWORD, "cert_pem": CERT_PEM,
        "key_pem": KEY_PEM}, format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT password, key_pem FROM mirrors_cluster WHERE alias = 'east'")
        password, key = cursor.fetchone()
    for stored in (password, key):
        assert stored.startswith("fernet:")
        _assert_clean("the database column", stored)
    with connection.cursor() as cursor:
        cursor.execute("SELECT password FROM auth_user WHERE username = 'admin'")
        assert "admin-password-123" not in cursor.fetchone()[0]
