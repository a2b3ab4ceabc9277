"""The dashboard's entry: login, and the overview at `/` (the mirrors list is in test_frontend_config.py)."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_dashboard_needs_a_login(client: Client):
    response = client.get("/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_login_form_logs_in(client: Client, admin_user):
    response = client.post("/login/", {"username": "admin", "password": "admin-password-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
