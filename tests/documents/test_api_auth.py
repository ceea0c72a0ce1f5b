from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from knox.crypto import hash_token
from knox.models import AuthToken

from tests.factories import UserFactory, api_token_for

pytestmark = pytest.mark.django_db


def test_token_for_valid_credentials(api_client):
    user = UserFactory(username="dana")
    response = api_client.post(
        "/api/auth/token",
        {"username": "dana", "password": "secret-pass-1"},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "expires_at"}
    stored = AuthToken.objects.get(user=user)
    assert stored.digest == hash_token(body["token"])
    expires_at = parse_datetime(body["expires_at"])
    assert expires_at == stored.expiry
    assert abs(expires_at - (timezone.now() + timedelta(hours=24))) < timedelta(
        minutes=1
    )


def test_wrong_password_is_refused(api_client):
    UserFactory(username="dana")
    response = api_client.post(
        "/api/auth/token", {"username": "dana", "password": "wrong"}, format="json"
    )
    assert response.status_code == 401
    assert response.json() == {
        "error_code": "authentication_failed",
        "detail": "Wrong username or password.",
    }


def test_missing_password_is_a_validation_error(api_client):
    response = api_client.post("/api/auth/token", {"username": "dana"}, format="json")
    assert response.status_code == 422
    assert response.json()["error_code"] == "validation_error"
    assert "password" in response.json()["fields"]


def test_inactive_user_gets_no_token(api_client):
    UserFactory(username="gone", is_active=False)
    response = api_client.post(
        "/api/auth/token",
        {"username": "gone", "password": "secret-pass-1"},
        format="json",
    )
    assert response.status_code == 401
    assert response.json()["error_code"] == "authentication_failed"


@pytest.mark.parametrize("keyword", ["Bearer", "Token", "bearer"])
def test_token_accepted_with_both_keywords(api_client, viewer, keyword):
    api_client.credentials(HTTP_AUTHORIZATION=f"{keyword} {api_token_for(viewer)}")
    response = api_client.get("/api/knowledge-bases")
    assert response.status_code == 200


def test_unknown_token_is_refused(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer not-a-real-token")
    response = api_client.get("/api/knowledge-bases")
    assert response.status_code == 401
    assert response.json()["error_code"] == "authentication_failed"


def test_anonymous_request_is_not_authenticated(api_client):
    response = api_client.get("/api/documents")
    assert response.status_code == 401
    assert response.json() == {
        "error_code": "not_authenticated",
        "detail": "Authentication credentials were not provided.",
    }


def test_session_login_works_for_browsable_api(client, viewer):
    client.force_login(viewer)
    response = client.get("/api/knowledge-bases", HTTP_ACCEPT="application/json")
    assert response.status_code == 200


def test_token_ttl_and_cap_come_from_settings(api_client, settings):
    settings.API_TOKEN_TTL_HOURS = 2
    settings.API_TOKEN_MAX_PER_USER = 2
    user = UserFactory(username="dana")
    tokens = [api_token_for(user) for _ in range(3)]
    assert AuthToken.objects.filter(user=user).count() == 2
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[0]}")
    assert api_client.get("/api/knowledge-bases").status_code == 401
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[2]}")
    assert api_client.get("/api/knowledge-bases").status_code == 200
    expiry = AuthToken.objects.filter(user=user).latest("created").expiry
    assert abs(expiry - (timezone.now() + timedelta(hours=2))) < timedelta(minutes=1)


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Token caf\xe9"])
def test_malformed_token_header_is_refused(api_client, header):
    api_client.credentials(HTTP_AUTHORIZATION=header.encode().decode("unicode_escape"))
    response = api_client.get("/api/knowledge-bases")
    assert response.status_code == 401
    assert response.json()["error_code"] == "authentication_failed"
