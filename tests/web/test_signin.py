"""Sign in and out of the pages: every member, behind the login throttle."""

from __future__ import annotations

import pytest
from django.test import override_settings

from documents.models import Role
from tests.factories import MembershipFactory, UserFactory

PASSWORD = "secret-pass-1"  # tests.factories.UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_throttle():
    from django.core.cache import cache

    cache.clear()


def test_the_page_has_labelled_fields_and_a_content_security_policy(client):
    response = client.get("/login/")
    assert response.status_code == 200
    page = response.content.decode()
    for hook in ("login-username", "login-password", "login-submit"):
        assert f'data-testid="{hook}"' in page
    assert '<label for="id_username">' in page
    assert '<label for="id_password">' in page
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "<script>" not in page  # scripts come from static files only


def test_an_editor_who_is_not_staff_signs_in(client):
    editor = MembershipFactory(role=Role.EDITOR).user
    assert not editor.is_staff
    response = client.post(
        "/login/", {"username": editor.username, "password": PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(editor.pk)


def test_a_wrong_password_says_so_without_saying_which_field(client):
    user = UserFactory()
    response = client.post("/login/", {"username": user.username, "password": "no"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-testid="login-error"' in page
    assert "do not match" in page
    assert "_auth_user_id" not in client.session


def test_the_next_page_is_kept_when_it_is_ours(client):
    user = UserFactory()
    response = client.post(
        "/login/",
        {"username": user.username, "password": PASSWORD, "next": "/library/"},
    )
    assert response["Location"] == "/library/"
    client.logout()
    response = client.post(
        "/login/",
        {"username": user.username, "password": PASSWORD, "next": "https://evil.test/"},
    )
    assert response["Location"] == "/"


@override_settings(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="3/day")
def test_guessing_is_throttled_as_on_the_api(client):
    user = UserFactory()
    wrong = {"username": user.username, "password": "no"}
    statuses = [client.post("/login/", wrong).status_code for _ in range(4)]
    assert statuses[:3] == [200, 200, 200]
    assert statuses[3] == 429
    last = client.post("/login/", {"username": user.username, "password": "no"})
    assert last.status_code == 429
    assert int(last["Retry-After"]) > 0
    assert "Too many sign-in attempts" in last.content.decode()


def test_sign_out_needs_a_post(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get("/logout/").status_code == 405
    response = client.post("/logout/")
    assert response.status_code == 302
    assert response["Location"] == "/login/"
    assert "_auth_user_id" not in client.session


def test_the_language_switch_is_remembered(client):
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/login/"})
    assert response.status_code == 302
    page = client.get("/login/").content.decode()
    assert '<html lang="zh-hans">' in page
    assert "登录" in page
    client.post("/i18n/setlang/", {"language": "en", "next": "/login/"})
    assert '<html lang="en">' in client.get("/login/").content.decode()


def test_the_admin_login_points_members_to_the_pages_sign_in(client):
    page = client.get("/admin/login/").content.decode()
    assert 'href="/login/"' in page
    assert 'name="username"' in page  # the admin's own form is still there
