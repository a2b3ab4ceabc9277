"""Every operation of the API's OpenAPI schema, as every kind of caller: who is refused, who is let through.

Data-driven from the schema, so operations added later are covered: reads need the viewer role (users:
admin), connector verbs (`.../connectors/...`), failover and failback the operator role, every other write the
admin role. Allowed means neither 401 nor 403 (a 400/404/409 on the test's dummy request is fine), and no 5xx but the
503 of an unreachable Kafka (replaced by one that is down).
"""

from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from mirrors.models import Cluster
from mirrors.roles import ADMIN, OPERATOR, ROLES, VIEWER
from mirrors.services.mirrors import create_mirror
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

SAFE = {"GET", "HEAD", "OPTIONS"}
OPEN = {("POST", "/api/v1/auth/token/")}  # logging in needs no login
PATH_VALUES = {"alias": "east", "name": "east-to-west", "kind": "source", "task": "0", "username": "target-user"}


def _operations() -> list[tuple[str, str]]:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return sorted((method.upper(), path) for path, item in paths.items() for method in item
                  if method in {"get", "post", "put", "patch", "delete"})


OPERATIONS = _operations()


def required_role(method: str, path: str) -> str:
    if method in SAFE:
        return ADMIN if path.startswith("/api/v1/users/") else VIEWER
    if re.fullmatch(r"/api/v1/clusters/\{alias\}/check/", path):
        return VIEWER  # a stored cluster's connection check changes nothing
    operator = "/connectors/" in path or re.fullmatch(r"/api/v1/mirrors/\{name\}/fail(over|back)/", path)
    return OPERATOR if operator else ADMIN


def _url(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "x"), path)


@pytest.fixture
def world(admin_user, make_user, kafka_unreachable):
    east = Cluster.objects.create(alias="east", bootstrap_servers="127.0.0.1:1")
    west = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:2")
    create_mirror(name="east-to-west", source=east, target=west)
    make_user("target-user", VIEWER)


def _call(client: APIClient, method: str, path: str):
    return client.generic(method, _url(path), data="{}", content_type="application/json")


def test_the_schema_lists_the_operations_this_test_relies_on():
    listed = set(OPERATIONS)
    assert {("GET", "/api/v1/clusters/"), ("POST", "/api/v1/clusters/"), ("DELETE", "/api/v1/mirrors/{name}/"),
            ("GET", "/api/v1/users/"), ("POST", "/api/v1/users/")} <= listed


@pytest.mark.parametrize(("method", "path"), [op for op in OPERATIONS if op not in OPEN],
                         ids=[f"{m} {p}" for m, p in OPERATIONS if (m, p) not in OPEN])
def test_without_credentials_every_operation_is_401(world, method, path):
    response = _call(APIClient(), method, path)
    assert response.status_code == 401, response.content


@pytest.mark.parametrize("role", [*ROLES, "superuser", "none"])
@pytest.mark.parametrize(("method", "path"), [op for op in OPERATIONS if op not in OPEN],
                         ids=[f"{m} {p}" for m, p in OPERATIONS if (m, p) not in OPEN])
def test_role_is_enforced(world, make_user, admin_user, role, method, path):
    if role == "superuser":
        client, rank = token_client(admin_user), ROLES.index(ADMIN)
    else:
        user = make_user(f"as-{role}", None if role == "none" else role)
        client, rank = token_client(user), (-1 if role == "none" else ROLES.index(role))
    needed = required_role(method, path)
    response = _call(client, method, path)
    assert response.status_code < 500 or response.status_code == 503, response.content  # 503: Kafka "down"
    if rank >= ROLES.index(needed):
        assert response.status_code not in (401, 403), f"{role} must be allowed: {response.content!r}"
    else:
        assert response.status_code == 403, f"{role} must be refused ({needed} needed): {response.content!r}"
        assert needed in response.json()["detail"]


def test_viewer_is_refused_every_write_and_allowed_every_read(world, api_as):
    viewer = api_as(VIEWER)
    for method, path in OPERATIONS:
        if (method, path) in OPEN:
            continue
        status = _call(viewer, method, path).status_code
        if required_role(method, path) == VIEWER:
            assert status not in (401, 403), (method, path, status)
        else:
            assert status == 403, (method, path, status)


def test_operator_may_use_connector_verbs_once_they_exist(world, api_as):
    operator = api_as(OPERATOR)
    verbs = [(m, p) for m, p in OPERATIONS if "/connectors/" in p and m not in SAFE]
    for method, path in verbs:
        assert _call(operator, method, path).status_code not in (401, 403), (method, path)
    assert _call(operator, "DELETE", "/api/v1/mirrors/{name}/").status_code == 403
    assert _call(operator, "POST", "/api/v1/clusters/").status_code == 403


def test_a_session_login_has_the_same_roles(world, make_user):
    client = APIClient()
    client.force_login(make_user("sessionviewer", VIEWER))
    assert client.get("/api/v1/clusters/").status_code == 200
    assert client.delete("/api/v1/clusters/east/").status_code == 403
    assert Cluster.objects.filter(alias="east").exists()


def test_an_inactive_user_token_no_longer_works(world, make_user):
    user = make_user("leaver", ADMIN)
    client = token_client(user)
    user.is_active = False
    user.save()
    assert client.get("/api/v1/clusters/").status_code == 401
