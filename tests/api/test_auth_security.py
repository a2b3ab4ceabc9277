"""Logins: CSRF on the dashboard, login rate limiting, the users API and `manage.py createuser`."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from mirrors import ratelimit
from mirrors.roles import ADMIN, OPERATOR, VIEWER, has_role, role_of, set_role

pytestmark = pytest.mark.django_db
User = get_user_model()


# -- roles -------------------------------------------------------------------------------------------
def test_roles_are_ordered_and_a_superuser_is_an_admin(admin_user, make_user):
    operator = make_user("olga", OPERATOR)
    assert role_of(admin_user) == ADMIN and has_role(admin_user, ADMIN)
    assert role_of(operator) == OPERATOR
    assert has_role(operator, VIEWER) and has_role(operator, OPERATOR) and not has_role(operator, ADMIN)
    assert role_of(make_user("nobody", None)) is None and not has_role(User.objects.get(username="nobody"), VIEWER)
    set_role(operator, ADMIN)
    assert role_of(User.objects.get(pk=operator.pk)) == ADMIN, "set_role replaces the role"
    with pytest.raises(ValueError, match="unknown role"):
        has_role(operator, "root")


# -- CSRF --------------------------------------------------------------------------------------------
def test_login_form_without_csrf_token_is_rejected(admin_user):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": "admin", "password": "admin-password-123"})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


def test_login_form_with_its_csrf_token_logs_in(admin_user):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login/")
    assert 'name="csrfmiddlewaretoken"' in page.content.decode()
    token = page.context["csrf_token"]
    response = client.post("/login/", {"username": "admin", "password": "admin-password-123",
                                       "csrfmiddlewaretoken": str(token)})
    assert response.status_code == 302
    dashboard = client.get("/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in dashboard, "the logout form carries the token"
    assert client.post("/logout/").status_code == 403, "logout without the token is refused"
    assert client.get("/").status_code == 200


def test_api_with_a_session_needs_the_csrf_token(admin_user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post("/api/v1/clusters/", {"alias": "east", "bootstrap_servers": "h:1"}, format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]


# -- rate limiting -----------------------------------------------------------------------------------
def _fail_login(client: Client, username: str = "admin", address: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": "wrong"}, REMOTE_ADDR=address)


def test_dashboard_login_is_limited_after_five_failures(admin_user):
    client = Client()
    for _ in range(ratelimit.LIMIT):
        assert _fail_login(client).status_code == 200
    response = client.post("/login/", {"username": "admin", "password": "admin-password-123"},
                           REMOTE_ADDR="10.0.0.1")
    assert response.status_code == 429, "refused even with the right password"
    assert 0 < int(response["Retry-After"]) <= ratelimit.WINDOW
    assert "too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # another address, or another user name, is not affected
    ok = client.post("/login/", {"username": "admin", "password": "admin-password-123"}, REMOTE_ADDR="10.0.0.2")
    assert ok.status_code == 302
    assert _fail_login(Client(), username="someone-else").status_code == 200


def test_the_lock_ends_after_the_window(admin_user, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])
    for _ in range(ratelimit.LIMIT):
        ratelimit.record_failure("admin", "10.0.0.1")
    assert ratelimit.retry_after("admin", "10.0.0.1") == ratelimit.WINDOW
    now[0] += ratelimit.WINDOW - 10
    assert ratelimit.retry_after("ADMIN ", "10.0.0.1") == 10, "user names compare case-insensitively"
    now[0] += 10
    assert ratelimit.retry_after("admin", "10.0.0.1") == 0


def test_a_successful_login_clears_the_count(admin_user):
    client = Client()
    for _ in range(ratelimit.LIMIT - 1):
        _fail_login(client)
    assert client.post("/login/", {"username": "admin", "password": "admin-password-123"},
                       REMOTE_ADDR="10.0.0.1").status_code == 302
    client.logout()
    for _ in range(ratelimit.LIMIT - 1):
        assert _fail_login(client).status_code == 200
    assert ratelimit.retry_after("admin", "10.0.0.1") == 0


def test_token_endpoint_is_limited_with_json(admin_user):
    client = APIClient()
    for _ in range(ratelimit.LIMIT):
        response = client.post("/api/v1/auth/token/", {"username": "admin", "password": "nope"}, format="json")
        assert response.status_code == 400
    response = client.post("/api/v1/auth/token/", {"username": "admin", "password": "admin-password-123"},
                           format="json")
    assert response.status_code == 429
    assert "too many failed logins" in response.json()["detail"] and int(response["Retry-After"]) > 0
    form = client.post("/api/v1/auth/token/", {"username": "admin", "password": "admin-password-123"})
    assert form.status_code == 429, "form-encoded attempts count the same"


def test_failures_count_across_the_dashboard_and_the_api(admin_user):
    for _ in range(ratelimit.LIMIT):
        APIClient().post("/api/v1/auth/token/", {"username": "admin", "password": "nope"}, format="json")
    assert Client().post("/login/", {"username": "admin", "password": "x"}).status_code == 429


def test_without_redis_the_limit_still_holds_in_memory(admin_user, settings):
    settings.CACHES = {**settings.CACHES, "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2}}}
    ratelimit.clear()
    try:
        client = Client()
        for _ in range(ratelimit.LIMIT):
            assert _fail_login(client).status_code == 200
        assert _fail_login(client).status_code == 429
    finally:
        ratelimit.clear()
        ratelimit._shared_down_until = 0.0


# -- users API ---------------------------------------------------------------------------------------
def test_admin_manages_users_and_passwords_are_write_only(api):
    response = api.post("/api/v1/users/", {"username": "olga", "role": "operator", "password": "olga-pass-123"},
                        format="json")
    assert response.status_code == 201, response.content
    assert "password" not in response.json() and response.json()["role"] == "operator"
    assert role_of(User.objects.get(username="olga")) == OPERATOR
    token = APIClient().post("/api/v1/auth/token/", {"username": "olga", "password": "olga-pass-123"}).json()["token"]

    listed = api.get("/api/v1/users/").json()
    assert {u["username"]: u["role"] for u in listed} == {"admin": "admin", "olga": "operator"}
    assert all("password" not in u for u in listed)

    assert api.patch("/api/v1/users/olga/", {"role": "viewer"}, format="json").json()["role"] == "viewer"
    assert api.patch("/api/v1/users/olga/", {"password": "new-pass-4567"}, format="json").status_code == 200
    assert not Token.objects.filter(key=token).exists(), "a new password revokes the old tokens"
    assert api.patch("/api/v1/users/olga/", {"is_active": False}, format="json").json()["is_active"] is False
    assert api.delete("/api/v1/users/olga/").status_code == 204
    assert not User.objects.filter(username="olga").exists()


def test_users_api_validates(api, admin_user):
    assert api.post("/api/v1/users/", {"username": "x", "role": "root", "password": "long-enough-1"},
                    format="json").status_code == 400
    assert "password" in api.post("/api/v1/users/", {"username": "x", "role": "viewer", "password": "short"},
                                  format="json").json()
    assert api.post("/api/v1/users/", {"username": "admin", "role": "viewer"}, format="json").status_code == 400
    assert api.patch("/api/v1/users/admin/", {"role": "viewer"}, format="json").status_code == 400
    assert api.patch("/api/v1/users/admin/", {"is_active": False}, format="json").status_code == 400
    assert api.delete("/api/v1/users/admin/").status_code == 409
    nobody = api.post("/api/v1/users/", {"username": "nopass", "role": "viewer"}, format="json")
    assert nobody.status_code == 201 and not User.objects.get(username="nopass").has_usable_password()


def test_operators_and_viewers_cannot_see_users(api_as):
    assert api_as(OPERATOR).get("/api/v1/users/").status_code == 403
    assert api_as(VIEWER).post("/api/v1/users/", {"username": "x", "role": "admin"}, format="json").status_code == 403


# -- createuser --------------------------------------------------------------------------------------
def test_createuser_creates_and_updates(capsys):
    call_command("createuser", "vera", "--role", "viewer", "--password", "vera-pass-123")
    assert role_of(User.objects.get(username="vera")) == VIEWER
    call_command("createuser", "vera", "--role", "operator")
    vera = User.objects.get(username="vera")
    assert role_of(vera) == OPERATOR and vera.check_password("vera-pass-123")
    call_command("createuser", "gen", "--role", "admin", "--token")
    out = capsys.readouterr().out
    assert "created gen with role admin" in out and "password: " in out and "token: " in out
    with pytest.raises(CommandError):
        call_command("createuser", "weak", "--role", "viewer", "--password", "short")


def test_createuser_keeps_a_superuser_admin(admin_user):
    with pytest.raises(CommandError, match="superuser"):
        call_command("createuser", "admin", "--role", "viewer")


# -- dashboard ---------------------------------------------------------------------------------------
def test_dashboard_shows_the_role_and_refuses_users_without_one(make_user):
    client = Client()
    client.force_login(make_user("vera", VIEWER))
    page = client.get("/").content.decode()
    assert 'class="role role-viewer"' in page
    client.force_login(make_user("nobody", None))
    response = client.get("/")
    assert response.status_code == 403 and "needs the viewer role" in response.content.decode()
