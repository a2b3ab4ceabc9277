"""API fuzzing: every operation of `/api/v1/schema/`, in process over WSGI, as an admin: no 5xx.

Kafka is replaced at its boundary (`KafkaAdmin`, `remote_cluster`) by one that fails at once as an
unreachable cluster would; the endpoints that talk to Kafka (cluster check, replication, offset
translation) then answer 200 ({"reachable": false}) or 503, and a 503 is accepted only where the
schema documents it (those, and metrics while Redis is down). Anything else >= 500 fails.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token

from mirrors.models import Cluster
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db

MAX_EXAMPLES = 25


@pytest.fixture
def _keep_test_connection():
    """A WSGI request ends by closing the database connection, the test's transaction with it (Django's
    test client disconnects the same signal)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fake_world(admin_user, make_user, kafka_unreachable, _keep_test_connection):
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:2")
    create_mirror(name="east-to-west", source=east, target=west)
    make_user("fuzz-viewer", "viewer")


@pytest.fixture
def admin_token(admin_user) -> str:
    return Token.objects.get_or_create(user=admin_user)[0].key


# Loaded at collection (no database needed for the schema); schemathesis.pytest.from_fixture does not
# work with pytest 9 (it sets `node._nodeid`).
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", WSGIHandler())

# Path parameters naming what `fake_world` creates: half the examples reach real objects, not only 404s.
KNOWN = {"alias": ["east", "west"], "name": ["east-to-west"], "kind": ["source", "checkpoint", "heartbeat"],
         "task": [0], "username": ["admin", "fuzz-viewer"]}


@schema.hook
def flatmap_path_parameters(context, path_parameters: dict | None):
    if not path_parameters:
        return st.just(path_parameters)
    known = {key: st.sampled_from(KNOWN[key]) if key in KNOWN else st.just(value)
             for key, value in path_parameters.items()}
    return st.one_of(st.just(path_parameters), st.fixed_dictionaries(known))


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_no_server_error(case, fake_world, admin_token):
    response = case.call(headers={"Authorization": f"Token {admin_token}"})
    documented = case.operation.definition.raw.get("responses", {})
    if response.status_code == 503 and "503" in documented:
        return  # a documented "unavailable" (Kafka or Redis down), not a crash
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}\n"
        f"query={case.query!r} body={case.body!r}\n{response.text[:2000]}")
