"""Guessing passwords against a real server: the API token login and the admin's.

Windows are a day long here, so that no test crosses a window's boundary (they
are fixed windows); the lockout itself lasts two seconds and is waited out.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.security.logins import PASSWORD, AdminBrowser, api_login, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

DAY = "86400"
GENEROUS = "1000"


def assert_refused(answer, error_code: str, longest: int) -> int:
    status, headers, body = answer
    assert status == 429, body
    assert body["error_code"] == error_code
    assert body["detail"]
    retry_after = int(headers["Retry-After"])
    assert 1 <= retry_after <= longest
    return retry_after


@pytest.fixture
def throttled_server(start_server):
    def start(**env: str):
        settings = {
            "LOGIN_THROTTLE_PER_ADDRESS": GENEROUS,
            "LOGIN_THROTTLE_PER_USERNAME": GENEROUS,
            "LOGIN_THROTTLE_WINDOW_SECONDS": DAY,
            "LOGIN_LOCKOUT_FAILURES": GENEROUS,
            "LOGIN_LOCKOUT_WINDOW_SECONDS": DAY,
            **env,
        }
        return start_server(**settings)

    return start


def test_wrong_passwords_for_one_username_are_throttled(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_THROTTLE_PER_USERNAME="3")

    answers = [api_login(server, "dana", f"guess-{n}") for n in range(3)]
    assert [status for status, _, _ in answers] == [401, 401, 401]
    assert_refused(api_login(server, "dana", "guess-4"), "throttled", 86400)
    # A changed case is the same username to the throttle.
    assert_refused(api_login(server, "DANA", "guess-5"), "throttled", 86400)
    assert_refused(api_login(server, "dana", PASSWORD), "throttled", 86400)


def test_other_usernames_from_the_same_address_are_throttled(throttled_server):
    for username in ("ann", "ben", "cat", "dan", "eve"):
        make_user(username)
    server = throttled_server(LOGIN_THROTTLE_PER_ADDRESS="4")

    for username in ("ann", "ben", "cat", "dan"):
        assert api_login(server, username, "guess")[0] == 401
    assert_refused(api_login(server, "eve", PASSWORD), "throttled", 86400)


def test_a_forged_forwarded_for_is_not_a_new_address(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_THROTTLE_PER_ADDRESS="2")

    for n in range(2):
        answer = api_login(
            server, "dana", "guess", **{"X-Forwarded-For": f"10.0.0.{n}"}
        )
        assert answer[0] == 401
    forged = api_login(server, "dana", "guess", **{"X-Forwarded-For": "10.0.0.9"})
    assert_refused(forged, "throttled", 86400)


def test_behind_a_trusted_proxy_each_client_address_counts(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_THROTTLE_PER_ADDRESS="1", TRUSTED_PROXY_COUNT="1")

    first = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.1"})
    second = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.2"})
    again = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.1"})
    assert first[0] == second[0] == 401
    assert_refused(again, "throttled", 86400)


def test_lockout_holds_against_the_right_password_until_it_ends(throttled_server):
    make_user("dana")
    make_user("erin")
    server = throttled_server(LOGIN_LOCKOUT_FAILURES="3", LOGIN_LOCKOUT_SECONDS="2")

    assert [api_login(server, "dana", "guess")[0] for _ in range(3)] == [401] * 3
    retry_after = assert_refused(
        api_login(server, "dana", PASSWORD), "account_locked", 2
    )
    # The lock is the account's, not the address's.
    assert api_login(server, "erin", PASSWORD)[0] == 200

    time.sleep(retry_after)  # waiting out the lockout is the behaviour under test
    deadline = time.monotonic() + 5
    while (answer := api_login(server, "dana", PASSWORD))[0] == 429:
        assert time.monotonic() < deadline, "the lockout did not end"
        time.sleep(0.2)
    status, _, body = answer
    assert status == 200
    assert body["token"]


def test_admin_login_is_throttled_and_locked_too(throttled_server):
    make_user("rita", is_staff=True)
    server = throttled_server(LOGIN_LOCKOUT_FAILURES="3", LOGIN_LOCKOUT_SECONDS="60")
    browser = AdminBrowser(server)

    for _ in range(2):
        status, _, page = browser.login("rita", "guess")
        assert status == 200
        assert "Please enter the correct username and password" in page
    # Failures through the API count against the same account.
    assert api_login(server, "rita", "guess")[0] == 401

    status, headers, page = browser.login("rita", PASSWORD)
    assert status == 429
    assert 1 <= int(headers["Retry-After"]) <= 60
    assert "Too many failed logins for this account" in page
    assert "Back to the login page" in page
    # The form cleans the username before authenticating; so does the lock.
    for variant in ("rita ", "\uff52\uff49\uff54\uff41"):
        assert browser.login(variant, PASSWORD)[0] == 429, variant
    assert_refused(api_login(server, "rita", PASSWORD), "account_locked", 60)


def test_admin_login_is_throttled_per_address(throttled_server):
    make_user("rita", is_staff=True)
    server = throttled_server(LOGIN_THROTTLE_PER_ADDRESS="2")
    browser = AdminBrowser(server)

    assert browser.login("nobody", "guess")[0] == 200
    assert browser.login("someone", "guess")[0] == 200
    status, headers, page = browser.login("rita", PASSWORD)
    assert status == 429
    assert int(headers["Retry-After"]) >= 1
    assert "Too many login attempts" in page


def test_the_right_password_forgets_earlier_failures(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LOCKOUT_FAILURES="3")

    for _ in range(2):
        assert api_login(server, "dana", "guess")[0] == 401
    assert api_login(server, "dana", PASSWORD)[0] == 200
    for _ in range(2):
        assert api_login(server, "dana", "guess")[0] == 401
    assert api_login(server, "dana", PASSWORD)[0] == 200


def test_concurrent_guesses_on_two_servers_share_one_limit(throttled_server):
    make_user("dana")
    servers = [throttled_server(LOGIN_THROTTLE_PER_USERNAME="4") for _ in range(2)]

    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(
            pool.map(
                lambda n: api_login(servers[n % 2], "dana", f"guess-{n}")[0], range(12)
            )
        )
    assert sorted(answers) == [401] * 4 + [429] * 8
