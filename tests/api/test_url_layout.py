"""The API's URL layout: every route under /api/v1/ with its name and methods, and the routes that must win
over the router's `mirrors/<name>/` and `clusters/<alias>/`."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RoutePattern

from mirrors.api.urls import router, urlpatterns, users

API = "api/v1/"
METHODS = ("get", "post", "put", "patch", "delete")


def _methods(callback) -> tuple[str, ...]:
    actions = getattr(callback, "actions", None)
    if actions is not None:  # a viewset route: the router's method -> action map, less what the viewset refuses
        allowed = callback.cls.http_method_names
        return tuple(sorted(m.upper() for m in actions if m in METHODS and m in allowed))
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view is None:  # a plain function view (the token endpoint)
        allowed = getattr(callback, "http_method_names", None) or ["post"]
        return tuple(sorted(m.upper() for m in allowed if m in METHODS))
    return tuple(sorted(m.upper() for m in METHODS if m in view.http_method_names and hasattr(view, m)))


def _walk(patterns, prefix: str = ""):
    for pattern in patterns:
        text = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, text)
        elif isinstance(pattern, URLPattern):
            yield text, pattern.name, _methods(pattern.callback)


def api_routes() -> list[tuple[str, str | None, tuple[str, ...]]]:
    """(pattern, name, methods) of every route under /api/v1/, sorted."""
    return sorted({r for r in _walk(get_resolver().url_patterns) if r[0].startswith(API)})


ROUTES = [
    ("api/v1/", "api-root", ("GET",)),
    ("api/v1/<drf_format_suffix:format>", "api-root", ("GET",)),
    ("api/v1/^clusters/$", "cluster-list", ("GET", "POST")),
    ("api/v1/^clusters/(?P<alias>[^/.]+)/$", "cluster-detail", ("DELETE", "GET", "PATCH", "PUT")),
    ("api/v1/^clusters/(?P<alias>[^/.]+)/check/$", "cluster-check", ("POST",)),
    ("api/v1/^clusters/(?P<alias>[^/.]+)/check\\.(?P<format>[a-z0-9]+)/?$", "cluster-check", ("POST",)),
    ("api/v1/^clusters/(?P<alias>[^/.]+)/replication/$", "cluster-replication", ("GET",)),
    ("api/v1/^clusters/(?P<alias>[^/.]+)/replication\\.(?P<format>[a-z0-9]+)/?$", "cluster-replication", ("GET",)),
    ("api/v1/^clusters/(?P<alias>[^/.]+)\\.(?P<format>[a-z0-9]+)/?$",
     "cluster-detail", ("DELETE", "GET", "PATCH", "PUT")),
    ("api/v1/^clusters\\.(?P<format>[a-z0-9]+)/?$", "cluster-list", ("GET", "POST")),
    ("api/v1/^mirrors/$", "mirror-list", ("GET", "POST")),
    ("api/v1/^mirrors/(?P<name>[^/.]+)/$", "mirror-detail", ("DELETE", "GET", "PATCH", "PUT")),
    ("api/v1/^mirrors/(?P<name>[^/.]+)/metrics/$", "mirror-metrics", ("GET",)),
    ("api/v1/^mirrors/(?P<name>[^/.]+)/metrics\\.(?P<format>[a-z0-9]+)/?$", "mirror-metrics", ("GET",)),
    ("api/v1/^mirrors/(?P<name>[^/.]+)/status/$", "mirror-status", ("GET",)),
    ("api/v1/^mirrors/(?P<name>[^/.]+)/status\\.(?P<format>[a-z0-9]+)/?$", "mirror-status", ("GET",)),
    ("api/v1/^mirrors/(?P<name>[^/.]+)\\.(?P<format>[a-z0-9]+)/?$", "mirror-detail", ("DELETE", "GET", "PATCH", "PUT")),
    ("api/v1/^mirrors\\.(?P<format>[a-z0-9]+)/?$", "mirror-list", ("GET", "POST")),
    ("api/v1/^users/$", "user-list", ("GET", "POST")),
    ("api/v1/^users/(?P<username>[\\w.@+-]+)/$", "user-detail", ("DELETE", "GET", "PATCH")),
    ("api/v1/auth/token/", "api-token", ("POST",)),
    ("api/v1/clusters/check/", "cluster-check-unsaved", ("POST",)),
    ("api/v1/events/", "events", ("GET",)),
    ("api/v1/import/", "import", ("POST",)),
    ("api/v1/mirrors/<str:name>/connectors/<str:kind>/pause/", "connector-pause", ("PUT",)),
    ("api/v1/mirrors/<str:name>/connectors/<str:kind>/restart/", "connector-restart", ("POST",)),
    ("api/v1/mirrors/<str:name>/connectors/<str:kind>/resume/", "connector-resume", ("PUT",)),
    ("api/v1/mirrors/<str:name>/connectors/<str:kind>/stop/", "connector-stop", ("PUT",)),
    ("api/v1/mirrors/<str:name>/connectors/<str:kind>/tasks/<int:task>/restart/", "task-restart", ("POST",)),
    ("api/v1/mirrors/<str:name>/events/", "mirror-events", ("GET",)),
    ("api/v1/mirrors/<str:name>/export/", "mirror-export", ("GET",)),
    ("api/v1/mirrors/<str:name>/failback/", "mirror-failback", ("POST",)),
    ("api/v1/mirrors/<str:name>/failover/", "mirror-failover", ("GET", "POST")),
    ("api/v1/mirrors/<str:name>/graphs/", "mirror-graphs", ("GET",)),
    ("api/v1/mirrors/<str:name>/readiness/", "mirror-readiness", ("GET",)),
    ("api/v1/mirrors/preview/", "mirror-preview", ("POST",)),
    ("api/v1/offsets/translate/", "offsets-translate", ("GET",)),
    ("api/v1/overview/", "overview", ("GET",)),
    ("api/v1/schema/", "api-schema", ("GET",)),
]


def test_the_api_routes_are_unchanged():
    assert api_routes() == ROUTES


@pytest.mark.parametrize(("url", "name"), [
    ("/api/v1/mirrors/preview/", "mirror-preview"),
    ("/api/v1/clusters/check/", "cluster-check-unsaved"),
    ("/api/v1/mirrors/east/", "mirror-detail"),
    ("/api/v1/mirrors/east/readiness/", "mirror-readiness"),
    ("/api/v1/mirrors/east/graphs/", "mirror-graphs"),
    ("/api/v1/mirrors/east/status/", "mirror-status"),
    ("/api/v1/mirrors/east/connectors/source/tasks/0/restart/", "task-restart"),
    ("/api/v1/users/admin/", "user-detail"),
])
def test_a_url_resolves_to_its_route(url, name):
    assert resolve(url).url_name == name


def _sample(pattern: str) -> str:
    """A URL of a `path()` pattern, each converter filled with a value it accepts."""
    return re.sub(r"<(\w+):(\w+)>", lambda m: "0" if m.group(1) == "int" else "x", pattern)


def test_only_the_two_helpers_share_a_path_with_the_routers():
    routers = [p for p in router.urls + users.urls if isinstance(p, URLPattern)]
    explicit = [p for p in urlpatterns if p not in routers and isinstance(p.pattern, RoutePattern)]
    shadowed = sorted(p.name for p in explicit if any(r.resolve(_sample(str(p.pattern))) for r in routers))
    assert shadowed == ["cluster-check-unsaved", "mirror-preview"]
    assert {p.name for p in urlpatterns[:2]} == set(shadowed), "they come before the routers' routes"
