from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_token_for_valid_credentials(api_client):
    user = UserFactory(username="dana")
    response = api_client.post(
        "/api/auth/token",
        {"username": "dana", "password": "secret-pass-1"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json() == {"token": Token.objects.get(user=user).key}


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
    token, _ = Token.objects.get_or_create(user=viewer)
    api_client.credentials(HTTP_AUTHORIZATION=f"{keyword} {token.key}")
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
