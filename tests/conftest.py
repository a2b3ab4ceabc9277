import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


@pytest.fixture
def admin_user(db):
    return get_user_model().objects.create_superuser("admin", "admin@example.com", "admin-password-123")


@pytest.fixture
def api(admin_user) -> APIClient:
    """An API client authenticated with a token, as automation would be."""
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=admin_user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


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
