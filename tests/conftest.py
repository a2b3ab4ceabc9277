import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


@pytest.fixture(autouse=True)
def _login_rate_limit_in_memory(settings):
    """Failed-login counts in a fresh in-memory cache per test, never in a Redis that may be running."""
    from django.core.cache import caches

    settings.CACHES = {**settings.CACHES, "ratelimit": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "test-ratelimit"}}
    cache = caches["ratelimit"]
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def admin_user(db):
    """A superuser: the admin role (as the demo's admin)."""
    return get_user_model().objects.create_superuser("admin", "admin@example.com", "admin-password-123")


def token_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api(admin_user) -> APIClient:
    """An API client authenticated with a token, as automation would be."""
    return token_client(admin_user)


@pytest.fixture
def make_user(db):
    """`make_user("vera", "viewer")`: an active user with that role (None: none), password `<name>-password-123`."""
    from mirrors.roles import set_role

    def make(username: str, role: str | None):
        user = get_user_model().objects.create_user(username, password=f"{username}-password-123")
        set_role(user, role)
        return user

    return make


@pytest.fixture
def api_as(make_user):
    """`api_as("operator")`: a token-authenticated API client of a new user with that role."""

    def client(role: str | None) -> APIClient:
        return token_client(make_user(f"user-{role or 'none'}", role))

    return client


class _Unreachable:
    """Stands for KafkaAdmin and the remote_cluster module: any call fails as a cluster that is down would."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, name: str):
        from mirrorcore.admin import ClusterError

        def fail(*args, **kwargs):
            raise ClusterError("cluster unreachable (test: Kafka is not running)")

        return fail


@pytest.fixture
def kafka_unreachable(monkeypatch):
    """The API's Kafka calls (cluster check, replication, offset translation, adopting an MM2) fail at once,
    as if down."""
    from mirrors.interchange import adopt
    from mirrors.services import clusters, offsets

    monkeypatch.setattr(clusters, "KafkaAdmin", _Unreachable)
    monkeypatch.setattr(offsets, "KafkaAdmin", _Unreachable)
    monkeypatch.setattr(offsets, "remote_cluster", _Unreachable())
    monkeypatch.setattr(adopt, "KafkaAdmin", _Unreachable)
    monkeypatch.setattr(adopt, "remote_cluster", _Unreachable())


_FIGURES: list[str] = []


@pytest.fixture
def figures(request):
    """Record a measured figure; all of them are printed at the end of the run (and in CI's log)."""

    def record(text: str) -> None:
        _FIGURES.append(f"{request.node.name}: {text}")

    return record


def pytest_terminal_summary(terminalreporter):
    if _FIGURES:
        terminalreporter.section("measured figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)


@pytest.fixture
def fake_redis(monkeypatch):
    """An in-memory Redis (tests/fakes.py) for every service that reads or writes Redis."""
    from mirrors.services import graphs, metrics, mirrors, observed
    from tests.fakes import FakeRedis

    fake = FakeRedis()
    for module in (metrics, observed, mirrors, graphs):
        monkeypatch.setattr(module, "get_redis", lambda: fake)
    return fake
