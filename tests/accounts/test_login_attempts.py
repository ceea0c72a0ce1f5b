"""accounts/login_attempts.py in this process: the rule the API token view, the
admin login and the pages' sign-in share, on SQLite and PostgreSQL. The same
over HTTP against real servers: tests/security/test_login_throttling.py."""

from __future__ import annotations

import logging

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "secret-pass-1"  # tests.factories.UserFactory
ATTACKER = "203.0.113.66"
OWNER = "198.51.100.7"


def api(username: str, password: str, address: str) -> int:
    return (
        APIClient()
        .post(
            "/api/auth/token",
            {"username": username, "password": password},
            format="json",
            REMOTE_ADDR=address,
        )
        .status_code
    )


def form(path: str, username: str, password: str, address: str):
    return Client().post(
        path, {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_ten_guesses_slow_their_address_and_not_the_owner_on_every_door():
    """The issue's scenario, default limits."""
    UserFactory(username="rita", is_staff=True)

    guesses = [api("rita", f"guess-{n}", ATTACKER) for n in range(10)]

    assert guesses == [401] * 5 + [429] * 5
    assert api("rita", PASSWORD, ATTACKER) == 429
    for path in ("/admin/login/", "/login/"):
        refused = form(path, "rita", PASSWORD, ATTACKER)
        assert refused.status_code == 429, path
        assert 1 <= int(refused["Retry-After"]) <= 60
    assert api("rita", PASSWORD, OWNER) == 200
    assert form("/admin/login/", "rita", PASSWORD, OWNER).status_code == 302
    assert form("/login/", "rita", PASSWORD, OWNER).status_code == 302


def test_failures_on_one_door_count_on_the_others():
    UserFactory(username="rita", is_staff=True)

    with override_settings(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="3/day"):
        assert api("rita", "guess", ATTACKER) == 401
        assert form("/admin/login/", "rita", "guess", ATTACKER).status_code == 200
        assert form("/login/", "rita", "guess", ATTACKER).status_code == 200
        assert api("rita", PASSWORD, ATTACKER) == 429


def test_refused_guesses_do_not_count_towards_the_account_lock():
    UserFactory(username="dana")

    with override_settings(
        LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="2/day", LOGIN_LIMITS_PER_ACCOUNT="3/day"
    ):
        answers = [api("dana", "guess", ATTACKER) for _ in range(10)]
        assert answers == [401, 401] + [429] * 8
        assert api("dana", PASSWORD, OWNER) == 200


def test_successes_from_a_shared_address_do_not_count():
    """An office behind one address: its people's logins are not failures."""
    users = [UserFactory() for _ in range(5)]

    with override_settings(LOGIN_LIMITS_PER_ADDRESS="2/day"):
        for user in users:
            assert api(user.username, PASSWORD, OWNER) == 200
        assert [api(users[0].username, "guess", OWNER) for _ in range(3)] == [
            401,
            401,
            429,
        ]


def test_an_ipv6_address_counts_as_its_64():
    UserFactory(username="dana")

    with override_settings(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="2/day"):
        assert api("dana", "guess", "2001:db8:0:7::1") == 401
        assert api("dana", "guess", "2001:db8:0:7::2") == 401
        assert api("dana", PASSWORD, "2001:db8:0:7:ffff::9") == 429
        assert api("dana", PASSWORD, "2001:db8:0:8::1") == 200


def test_past_the_account_limit_only_known_addresses_get_in(caplog):
    UserFactory(username="dana")

    with override_settings(
        LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="2/day", LOGIN_LIMITS_PER_ACCOUNT="4/day"
    ):
        assert api("dana", PASSWORD, OWNER) == 200
        with caplog.at_level(logging.WARNING, logger="accounts.login_attempts"):
            for bot in ("203.0.113.1", "203.0.113.2"):
                assert [api("dana", "guess", bot) for _ in range(2)] == [401, 401]
        locked = APIClient().post(
            "/api/auth/token",
            {"username": "dana", "password": PASSWORD},
            format="json",
            REMOTE_ADDR="192.0.2.9",
        )
        assert locked.status_code == 429
        assert locked.json()["error_code"] == "account_locked"
        assert api("dana", PASSWORD, OWNER) == 200

    reached = [
        record.getMessage()
        for record in caplog.records
        if record.name == "accounts.login_attempts"
    ]
    assert reached == [
        "Login limit reached: account_at_address 2/86400s, username 'dana' from "
        "203.0.113.1; refused for 86400 seconds",
        "Login limit reached: account_at_address 2/86400s, username 'dana' from "
        "203.0.113.2; refused for 86400 seconds",
        "Login limit reached: account 4/86400s, username 'dana' from "
        "203.0.113.2; refused for 86400 seconds",
    ]


def test_the_sign_in_page_says_how_long_to_wait_in_both_languages():
    UserFactory(username="dana")

    with override_settings(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="1/hour"):
        form("/login/", "dana", "guess", ATTACKER)
        english = form("/login/", "dana", PASSWORD, ATTACKER)
        client = Client()
        client.post("/i18n/setlang/", {"language": "zh-hans"})
        chinese = client.post(
            "/login/", {"username": "dana", "password": PASSWORD}, REMOTE_ADDR=ATTACKER
        )

    assert english.status_code == chinese.status_code == 429
    assert "Too many sign-in attempts. Try again in 59" in english.content.decode()
    assert "登录尝试次数过多" in chinese.content.decode()
    assert "分钟" in chinese.content.decode()


def test_replaced_settings_are_named_by_check(monkeypatch, capsys):
    monkeypatch.setenv("LOGIN_LOCKOUT_FAILURES", "10")

    call_command("check")

    assert "accounts.W001" in capsys.readouterr().err
