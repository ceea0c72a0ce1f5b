"""API tokens against a real server: hashed, expiring, one per login, revocable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from knox.models import AuthToken

from tests.security.logins import PASSWORD, FormBrowser, make_user, request
from tests.security.logins import api_login as login_answer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def api_login(server, username: str = "dana") -> dict:
    status, _, body = login_answer(server, username, PASSWORD)
    assert status == 200, body
    return body


def get(server, token: str, keyword: str = "Bearer") -> int:
    headers = {"Authorization": f"{keyword} {token}"}
    return request("GET", server.url("/api/knowledge-bases"), headers=headers)[0]


def post(server, path: str, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    return request("POST", server.url(path), b"", headers)[0]


def every_stored_value() -> list[str]:
    """Every value of every row of every table of the database, as text."""
    values = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
            values.extend(str(value) for row in cursor.fetchall() for value in row)
    return values


@pytest.fixture
def server(start_server):
    make_user("dana")
    return start_server(API_TOKEN_TTL_HOURS="2")


def test_the_token_is_stored_only_as_a_digest(server):
    token = api_login(server)["token"]

    assert get(server, token) == 200
    assert not [value for value in every_stored_value() if token in value]


def test_the_answer_says_when_the_token_expires(server):
    body = api_login(server)

    expires_at = parse_datetime(body["expires_at"])
    assert abs(expires_at - (timezone.now() + timedelta(hours=2))) < timedelta(
        minutes=1
    )
    assert AuthToken.objects.get().expiry == expires_at


def test_an_expired_token_is_refused(server):
    token = api_login(server)["token"]
    assert get(server, token) == 200

    AuthToken.objects.update(expiry=timezone.now() - timedelta(seconds=1))
    status, _, body = request(
        "GET",
        server.url("/api/knowledge-bases"),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert status == 401
    assert b"authentication_failed" in body


def test_each_login_gets_a_new_token_and_both_work(server):
    first = api_login(server)["token"]
    second = api_login(server)["token"]

    assert first != second
    assert get(server, first) == 200
    assert get(server, second) == 200


def test_logout_revokes_only_the_token_it_is_made_with(server):
    first = api_login(server)["token"]
    second = api_login(server)["token"]

    assert post(server, "/api/auth/logout", first) == 204
    assert get(server, first) == 401
    assert get(server, second) == 200
    assert post(server, "/api/auth/logout", first) == 401


def test_logout_all_revokes_every_token_of_the_user(server):
    make_user("erin")
    tokens = [api_login(server)["token"] for _ in range(3)]
    other = api_login(server, "erin")["token"]

    assert post(server, "/api/auth/logout-all", tokens[0]) == 204
    assert [get(server, token) for token in tokens] == [401, 401, 401]
    assert get(server, other) == 200


def test_both_header_forms_work(server):
    token = api_login(server)["token"]
    tampered = token[:-1] + ("1" if token.endswith("0") else "0")

    for keyword in ("Bearer", "Token", "bearer", "token"):
        assert get(server, token, keyword) == 200, keyword
        assert get(server, tampered, keyword) == 401, keyword


def test_only_superusers_see_tokens_in_the_admin_and_never_the_secret(server):
    make_user("root", is_staff=True, is_superuser=True)
    make_user("rita", is_staff=True)
    token = api_login(server)["token"]
    stored = AuthToken.objects.get()

    superuser = FormBrowser(server)
    assert superuser.login("root", PASSWORD)[0] == 200
    status, page = superuser.get("/admin/accounts/apitoken/")
    assert status == 200
    assert "dana" in page
    status, detail = superuser.get(f"/admin/accounts/apitoken/{stored.pk}/change/")
    assert status == 200
    # The digest is the row's key (and in its URL); it cannot be used as a token.
    for secret in (token, stored.token_key):
        assert secret not in page
        assert secret not in detail
    assert "Digest" not in detail
    assert superuser.get("/admin/knox/authtoken/")[0] == 404

    staff = FormBrowser(server)
    assert staff.login("rita", PASSWORD)[0] == 200
    assert staff.get("/admin/accounts/apitoken/")[0] == 403
