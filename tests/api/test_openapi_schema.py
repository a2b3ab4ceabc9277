"""The OpenAPI schema types every JSON answer of the API: no operation answers an untyped object."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

OPERATIONS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _json_answers(schema: dict, success: bool = True):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in OPERATIONS:
                continue
            for code, response in operation["responses"].items():
                body = (response.get("content") or {}).get("application/json")
                if str(code).startswith("2") == success and body is not None:
                    yield f"{method.upper()} {path} {code}", body["schema"]


def _typed(node: dict) -> bool:
    if node.get("type") == "array":
        return _typed(node.get("items", {}))
    return "$ref" in node or bool(node.get("properties"))


def _fields(schema: dict, method: str, path: str, code: int = 200) -> set[str]:
    content = schema["paths"][path][method]["responses"][str(code)]["content"]
    return set(_resolve(schema, content["application/json"]["schema"])["properties"])


def test_every_2xx_json_answer_has_a_shape(schema):
    answers = dict(_json_answers(schema))
    assert len(answers) > 30 and all(key.split()[1].startswith("/api/v1/") for key in answers)
    assert [key for key, node in answers.items() if not _typed(node)] == []


def test_every_error_answer_has_a_shape_too(schema):
    """{"detail": why}, or each field (or subject) at fault with its messages."""
    errors = dict(_json_answers(schema, success=False))
    untyped = [key for key, node in errors.items()
               if not (_typed(node) or (isinstance(node.get("additionalProperties"), dict)
                       and node["additionalProperties"].get("type") == "array"))]
    assert len(errors) > 10 and untyped == []


def test_every_2xx_answer_but_a_204_or_a_file_has_a_json_body(schema):
    bare = [f"{method.upper()} {path} {code}" for path, item in schema["paths"].items()
            for method, operation in item.items() if method in OPERATIONS
            for code, response in operation["responses"].items()
            if str(code).startswith("2") and code != "204" and not response.get("content")]
    assert bare == []


@pytest.mark.parametrize(("method", "path", "code", "expected"), [
    ("get", "/api/v1/mirrors/{name}/status/", 200,
     {"name", "generation", "application", "connectors", "progress", "link", "checkpoints", "lag"}),
    ("get", "/api/v1/overview/", 200, {"generated_at", "clusters", "mirrors", "links", "problems", "counts"}),
    ("get", "/api/v1/mirrors/{name}/readiness/", 200,
     {"mirror", "topics", "groups", "source_idle_seconds", "producers_stopped", "drained", "summary"}),
    ("post", "/api/v1/mirrors/{name}/failover/", 200,
     {"mirror", "phase", "forced", "drained", "groups", "pending", "pending_back", "reverse_mirror",
      "source_stopped"}),
    ("get", "/api/v1/mirrors/{name}/failover/", 200, {"mirror", "phase", "groups", "pending"}),
    ("post", "/api/v1/mirrors/{name}/failback/", 200, {"mirror", "phase", "reverse_mirror", "pending_back"}),
    ("post", "/api/v1/import/", 201,
     {"dry_run", "created", "updated", "reused", "clusters", "mirrors", "needs_values", "warnings", "adopted"}),
    ("post", "/api/v1/import/", 200, {"dry_run", "created"}),
    ("post", "/api/v1/mirrors/{name}/connectors/{kind}/restart/", 202,
     {"mirror", "connector", "desired_state", "state", "restart_token", "detail"}),
    ("post", "/api/v1/mirrors/preview/", 200, {"source", "target", "matched", "total", "topics", "excluded"}),
    ("post", "/api/v1/clusters/check/", 200, {"reachable", "brokers", "controller", "cluster_id", "error"}),
    ("get", "/api/v1/mirrors/{name}/graphs/", 200, {"mirror", "range", "resolution", "graphs"}),
])
def test_key_answers_list_their_main_fields(schema, method, path, code, expected):
    assert expected <= _fields(schema, method, path, code)


def test_nested_shapes_are_described(schema):
    overview = _resolve(schema, {"$ref": "#/components/schemas/Overview"})
    mirror_row = _resolve(schema, overview["properties"]["mirrors"]["items"])
    assert {"health", "reason", "link", "lag_records", "connectors", "url"} <= set(mirror_row["properties"])
    readiness = _resolve(schema, {"$ref": "#/components/schemas/Readiness"})
    assert {"topic", "remote_topic", "caught_up"} <= set(
        _resolve(schema, readiness["properties"]["topics"]["items"])["properties"])
    status = _resolve(schema, {"$ref": "#/components/schemas/MirrorStatus"})
    connector = _resolve(schema, status["properties"]["connectors"]["additionalProperties"])
    assert {"state", "desired_state", "restarts", "error", "tasks"} <= set(connector["properties"])
