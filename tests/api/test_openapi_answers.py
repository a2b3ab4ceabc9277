"""Real answers, errors included, match the shapes the OpenAPI schema gives them: every required field
present, none undocumented, each of the documented type (nested objects, lists and maps included)."""

from __future__ import annotations

import time

import pytest
from drf_spectacular.generators import SchemaGenerator

from mirrorcore import series
from mirrors.models import Cluster
from mirrors.services import metrics
from mirrors.services.mirrors import create_mirror
from tests.api.importing import BASE, BASE_VALUES, example, import_json
from tests.api.test_overview_api import running

pytestmark = pytest.mark.django_db

TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}
OPEN = {"progress"}  # the application's metrics join the documented counters under their own names


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def mismatches(schema: dict, node: dict, value, where: str = "") -> list[str]:
    """Where `value` departs from the schema `node`."""
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    if value is None:
        return [] if node.get("nullable") or not node else [f"{where}: null"]
    if "allOf" in node:  # a nested serializer with a description or allow_null
        return mismatches(schema, node["allOf"][0], value, where)
    if "properties" in node:
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        found = [f"{where}.{key}: missing" for key in node.get("required", []) if key not in value]
        if where.rsplit(".", 1)[-1] not in OPEN:
            found += [f"{where}.{key}: undocumented" for key in value if key not in node["properties"]]
        for key, child in value.items():
            if key in node["properties"]:
                found += mismatches(schema, node["properties"][key], child, f"{where}.{key}")
        return found
    kind = node.get("type")
    wrong = kind in TYPES and (not isinstance(value, TYPES[kind]) or (kind != "boolean" and isinstance(value, bool)))
    if wrong:
        return [f"{where}: {value!r} is not {kind}"]
    if kind == "array":
        return [m for i, item in enumerate(value) for m in mismatches(schema, node.get("items", {}), item,
                                                                      f"{where}[{i}]")]
    if kind == "object" and node.get("additionalProperties"):
        return [m for key, item in value.items()
                for m in mismatches(schema, node["additionalProperties"], item, f"{where}[{key}]")]
    return []


def answer_schema(schema: dict, method: str, path: str, code: int) -> dict:
    return schema["paths"][path][method]["responses"][str(code)]["content"]["application/json"]["schema"]


@pytest.fixture
def mirror(fake_redis):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m", source=east, target=west)
    running(fake_redis, mirror)
    return mirror


@pytest.mark.parametrize(("method", "url", "path", "code"), [
    ("get", "/api/v1/mirrors/m/status/", "/api/v1/mirrors/{name}/status/", 200),
    ("get", "/api/v1/overview/", "/api/v1/overview/", 200),
    ("get", "/api/v1/mirrors/m/metrics/?series=lag", "/api/v1/mirrors/{name}/metrics/", 200),
    ("get", "/api/v1/mirrors/m/graphs/?range=15m", "/api/v1/mirrors/{name}/graphs/", 200),
    ("put", "/api/v1/mirrors/m/connectors/source/pause/", "/api/v1/mirrors/{name}/connectors/{kind}/pause/", 202),
    ("get", "/api/v1/mirrors/m/readiness/", "/api/v1/mirrors/{name}/readiness/", 200),
    ("put", "/api/v1/mirrors/nope/connectors/source/pause/", "/api/v1/mirrors/{name}/connectors/{kind}/pause/", 404),
    ("get", "/api/v1/mirrors/m/graphs/?range=2y", "/api/v1/mirrors/{name}/graphs/", 400),
    ("post", "/api/v1/mirrors/m/failback/", "/api/v1/mirrors/{name}/failback/", 409),
])
def test_an_answer_matches_its_schema(api, schema, mirror, monkeypatch, method, url, path, code):
    response = getattr(api, method)(url)
    assert response.status_code == code, response.content
    assert mismatches(schema, answer_schema(schema, method, path, code), response.json()) == []


def test_a_stopped_mirror_s_status_matches_too(api, schema, fake_redis):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    create_mirror(name="idle", source=east, target=west)
    series.append(fake_redis, "idle", "lag", {"records": 3, "seconds": 1.0}, at=time.time() - 1)
    assert metrics.latest_point("idle", "lag") is not None
    body = api.get("/api/v1/mirrors/idle/status/").json()
    assert mismatches(schema, answer_schema(schema, "get", "/api/v1/mirrors/{name}/status/", 200), body) == []


def test_an_import_s_answer_matches_its_schema(api, schema):
    response = import_json(api, {"content": example(BASE), "values": BASE_VALUES}, "?dry_run=true")
    assert response.status_code == 200, response.content
    assert mismatches(schema, answer_schema(schema, "post", "/api/v1/import/", 200), response.json()) == []


def test_the_check_finds_what_departs_from_the_schema(api, schema, mirror):
    body = api.get("/api/v1/mirrors/m/status/").json()
    shape = answer_schema(schema, "get", "/api/v1/mirrors/{name}/status/", 200)
    del body["generation"]
    body["application"]["restarts"] = "three"
    body["link"]["colour"] = "green"
    assert sorted(mismatches(schema, shape, body)) == [
        ".application.restarts: 'three' is not integer", ".generation: missing", ".link.colour: undocumented"]
