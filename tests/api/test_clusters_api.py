"""Cluster endpoints: validation, write-only secrets, encryption at rest. No broker needed."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from mirrors.models import Cluster
from tests import pem

pytestmark = pytest.mark.django_db


def test_token_endpoint_returns_a_token_that_authenticates(admin_user):
    client = APIClient()
    response = client.post("/api/v1/auth/token/", {"username": "admin", "password": "admin-password-123"})
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert client.get("/api/v1/clusters/").status_code == 200


def test_request_without_token_is_refused_naming_the_header():
    response = APIClient().post("/api/v1/clusters/", {"alias": "east", "bootstrap_servers": "127.0.0.1:9092"})
    assert response.status_code == 401
    assert "Authorization" in response.json()
    assert not Cluster.objects.exists()


def test_wrong_token_is_refused():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/v1/mirrors/").status_code == 401


@pytest.mark.parametrize("bootstrap", ["", "localhost", "localhost:0", "localhost:99999", "a:1,,b:2", "http://x:9092"])
def test_malformed_bootstrap_address_is_rejected(api, bootstrap):
    response = api.post("/api/v1/clusters/", {"alias": "east", "bootstrap_servers": bootstrap}, format="json")
    assert response.status_code == 400
    assert "bootstrap_servers" in response.json()
    assert not Cluster.objects.exists()


def test_alias_with_separator_is_rejected(api):
    response = api.post("/api/v1/clusters/", {"alias": "us.east", "bootstrap_servers": "h:1"}, format="json")
    assert response.status_code == 400
    assert "alias" in response.json()


def test_sasl_needs_mechanism_username_and_password(api):
    response = api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9092", "security_protocol": "SASL_SSL",
    }, format="json")
    assert response.status_code == 400
    assert {"sasl_mechanism", "username", "password"} <= set(response.json())


def test_certificate_without_key_is_rejected(api):
    response = api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9092", "security_protocol": "SSL", "cert_pem": pem.client().cert_pem,
    }, format="json")
    assert response.status_code == 400
    assert "key_pem" in response.json()


def test_config_may_not_repeat_first_class_fields(api):
    response = api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9092", "config": {"bootstrap.servers": "other:1"},
    }, format="json")
    assert response.status_code == 400
    assert "config" in response.json()


def test_secrets_are_write_only_and_encrypted_at_rest(api):
    response = api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9093", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "username": "mirror", "password": "s3cret-Pa55",
        "config": {"request.timeout.ms": 20000},
    }, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert "password" not in body and body["has_password"] is True
    assert body["config"] == {"request.timeout.ms": "20000"}
    assert "s3cret" not in api.get("/api/v1/clusters/east/").content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT password FROM mirrors_cluster WHERE alias = 'east'")
        (stored,) = cursor.fetchone()
    assert stored.startswith("fernet:") and "s3cret" not in stored
    assert Cluster.objects.get(alias="east").password == "s3cret-Pa55"


def test_patch_keeps_the_stored_password_and_refuses_alias_change(api):
    api.post("/api/v1/clusters/", {
        "alias": "east", "bootstrap_servers": "h:9093", "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN", "username": "u", "password": "p",
    }, format="json")
    response = api.patch("/api/v1/clusters/east/", {"bootstrap_servers": "h2:9093"}, format="json")
    assert response.status_code == 200, response.content
    assert Cluster.objects.get(alias="east").password == "p"
    response = api.patch("/api/v1/clusters/east/", {"alias": "west"}, format="json")
    assert response.status_code == 400 and "alias" in response.json()


def test_cluster_used_by_a_mirror_cannot_be_deleted(api):
    for alias in ("east", "west"):
        api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:1"}, format="json")
    assert api.post("/api/v1/mirrors/", {"name": "m", "source": "east", "target": "west"},
                    format="json").status_code == 201
    response = api.delete("/api/v1/clusters/east/")
    assert response.status_code == 409
    assert "m" in response.json()["detail"]
    assert api.delete("/api/v1/mirrors/m/").status_code == 204
    assert api.delete("/api/v1/clusters/east/").status_code == 204


def test_openapi_schema_is_served(api):
    response = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/mirrors/{name}/status/" in paths
    assert "/api/v1/clusters/{alias}/check/" in paths
