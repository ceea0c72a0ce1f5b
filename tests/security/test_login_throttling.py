"""Guessing passwords against a real server: the API token login, the admin's and
the pages' sign-in, which share one rule (accounts/login_attempts.py).

Limits are a day long here unless a test waits one out, so that no test crosses
the end of a window by accident. Client addresses come from X-Forwarded-For
behind one trusted proxy (`TRUSTED_PROXY_COUNT=1`) where a test needs several.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.security.logins import (
    PASSWORD,
    FormBrowser,
    api_login,
    make_user,
    request,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

GENEROUS = "1000/day"
ATTACKER = {"X-Forwarded-For": "203.0.113.66"}
OWNER = {"X-Forwarded-For": "198.51.100.7"}


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
            "LOGIN_LIMITS_PER_ADDRESS": GENEROUS,
            "LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS": GENEROUS,
            "LOGIN_LIMITS_PER_ACCOUNT": GENEROUS,
            **env,
        }
        return start_server(**settings)

    return start


def test_wrong_passwords_for_one_username_are_throttled(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="3/day")

    answers = [api_login(server, "dana", f"guess-{n}") for n in range(3)]
    assert [status for status, _, _ in answers] == [401, 401, 401]
    assert_refused(api_login(server, "dana", "guess-4"), "throttled", 86400)
    # A changed case is the same username to the throttle.
    assert_refused(api_login(server, "DANA", "guess-5"), "throttled", 86400)
    assert_refused(api_login(server, "dana", PASSWORD), "throttled", 86400)


def test_other_usernames_from_the_same_address_are_throttled(throttled_server):
    for username in ("ann", "ben", "cat", "dan", "eve"):
        make_user(username)
    server = throttled_server(LOGIN_LIMITS_PER_ADDRESS="4/day")

    for username in ("ann", "ben", "cat", "dan"):
        assert api_login(server, username, "guess")[0] == 401
    assert_refused(api_login(server, "eve", PASSWORD), "throttled", 86400)


def test_a_forged_forwarded_for_is_not_a_new_address(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LIMITS_PER_ADDRESS="2/day")

    for n in range(2):
        answer = api_login(
            server, "dana", "guess", **{"X-Forwarded-For": f"10.0.0.{n}"}
        )
        assert answer[0] == 401
    forged = api_login(server, "dana", "guess", **{"X-Forwarded-For": "10.0.0.9"})
    assert_refused(forged, "throttled", 86400)


def test_behind_a_trusted_proxy_each_client_address_counts(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LIMITS_PER_ADDRESS="1/day", TRUSTED_PROXY_COUNT="1")

    first = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.1"})
    second = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.2"})
    again = api_login(server, "dana", "guess", **{"X-Forwarded-For": "203.0.113.1"})
    assert first[0] == second[0] == 401
    assert_refused(again, "throttled", 86400)


def test_lockout_holds_against_the_right_password_until_it_ends(throttled_server):
    make_user("dana")
    make_user("erin")
    # The window starts with the first failure; the three fit in it under load.
    server = throttled_server(LOGIN_LIMITS_PER_ACCOUNT="3/3s")

    assert [api_login(server, "dana", "guess")[0] for _ in range(3)] == [401] * 3
    retry_after = assert_refused(
        api_login(server, "dana", PASSWORD), "account_locked", 3
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
    server = throttled_server(LOGIN_LIMITS_PER_ACCOUNT="3/min")
    browser = FormBrowser(server)

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
    server = throttled_server(LOGIN_LIMITS_PER_ADDRESS="2/day")
    browser = FormBrowser(server)

    assert browser.login("nobody", "guess")[0] == 200
    assert browser.login("someone", "guess")[0] == 200
    status, headers, page = browser.login("rita", PASSWORD)
    assert status == 429
    assert int(headers["Retry-After"]) >= 1
    assert "Too many login attempts" in page


def test_the_right_password_forgets_earlier_failures_there(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="3/day")

    for _ in range(2):
        assert api_login(server, "dana", "guess")[0] == 401
    assert api_login(server, "dana", PASSWORD)[0] == 200
    for _ in range(2):
        assert api_login(server, "dana", "guess")[0] == 401
    assert api_login(server, "dana", PASSWORD)[0] == 200


def test_concurrent_guesses_on_two_servers_share_one_limit(throttled_server):
    make_user("dana")
    servers = [
        throttled_server(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="4/day") for _ in range(2)
    ]

    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(
            pool.map(
                lambda n: api_login(servers[n % 2], "dana", f"guess-{n}")[0], range(12)
            )
        )
    assert sorted(answers) == [401] * 4 + [429] * 8


# --- Nobody can lock the owner out (issue 36, point 2) ---------------------------


def test_guessing_from_one_address_slows_it_and_not_the_owner(start_server):
    """The issue's scenario with the default limits: ten wrong passwords from one
    address, then the right one from there (slowed) and from another (in),
    through all three doors."""
    make_user("rita", is_staff=True)
    server = start_server(TRUSTED_PROXY_COUNT="1")

    guesses = [api_login(server, "rita", f"guess-{n}", **ATTACKER) for n in range(10)]
    assert [status for status, _, _ in guesses] == [401] * 5 + [429] * 5
    for refused in guesses[5:]:
        assert_refused(refused, "throttled", 60)
    assert_refused(api_login(server, "rita", PASSWORD, **ATTACKER), "throttled", 60)
    for path in ("/admin/login/", "/login/"):
        status, headers, _ = FormBrowser(server, path, **ATTACKER).login(
            "rita", PASSWORD
        )
        assert status == 429, path
        assert 1 <= int(headers["Retry-After"]) <= 60

    assert api_login(server, "rita", PASSWORD, **OWNER)[0] == 200
    admin = FormBrowser(server, **OWNER)
    assert admin.login("rita", PASSWORD)[0] == 200
    assert admin.landed == "/admin/"
    pages = FormBrowser(server, "/login/", **OWNER)
    pages.login("rita", PASSWORD, next_page="/library/")
    assert pages.landed == "/library/"  # signed in, sent on to the page asked for


def test_the_wait_grows_with_each_tier(throttled_server):
    make_user("dana")
    server = throttled_server(LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="2/5s,4/day")

    assert [api_login(server, "dana", "guess")[0] for _ in range(2)] == [401, 401]
    first_wait = assert_refused(api_login(server, "dana", "guess"), "throttled", 5)
    time.sleep(first_wait)  # waiting out the first tier is the behaviour under test
    deadline = time.monotonic() + 8
    while (answer := api_login(server, "dana", "guess"))[0] == 429:
        assert time.monotonic() < deadline, "the first tier did not end"
        time.sleep(0.2)
    assert answer[0] == 401
    assert api_login(server, "dana", "guess")[0] == 401

    second_wait = assert_refused(
        api_login(server, "dana", PASSWORD), "throttled", 86400
    )
    assert second_wait > 60 > first_wait


def lockouts(server, limit: str) -> float:
    status, _, body = request("GET", server.url("/metrics"))
    assert status == 200
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            name, labels = sample.name, sample.labels
            if name == "curator_login_lockouts_total" and labels["limit"] == limit:
                return sample.value
    raise AssertionError(f"no curator_login_lockouts_total for {limit}")


def test_an_account_guessed_from_many_addresses_locks_but_not_where_its_owner_was(
    throttled_server,
):
    make_user("dana")
    server = throttled_server(
        TRUSTED_PROXY_COUNT="1",
        METRICS_PUBLIC="true",
        LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS="3/day",
        LOGIN_LIMITS_PER_ACCOUNT="6/day",
    )
    home = {"X-Forwarded-For": "198.51.100.7"}
    assert api_login(server, "dana", PASSWORD, **home)[0] == 200

    for bot in ("203.0.113.1", "203.0.113.2"):
        forwarded = {"X-Forwarded-For": bot}
        statuses = [
            api_login(server, "dana", "guess", **forwarded)[0] for _ in range(3)
        ]
        assert statuses == [401] * 3
    # Six failures from two addresses: a third, new one is refused...
    for address in ("203.0.113.3", "192.0.2.50"):
        refused = api_login(server, "dana", PASSWORD, **{"X-Forwarded-For": address})
        assert_refused(refused, "account_locked", 86400)
    pages = FormBrowser(server, "/login/", **{"X-Forwarded-For": "192.0.2.50"})
    status, _, page = pages.login("dana", PASSWORD)
    assert status == 429
    assert "from where you signed in before" in page
    # ...and the owner, where they signed in before, is not.
    assert api_login(server, "dana", PASSWORD, **home)[0] == 200

    assert lockouts(server, "account") == 1
    assert lockouts(server, "account_at_address") == 2
    assert lockouts(server, "address") == 0
    assert "Login limit reached: account 6/86400s, username 'dana'" in (
        server.process.stderr
    )


def test_concurrent_guesses_from_many_addresses_share_the_account_limit(
    throttled_server,
):
    make_user("dana")
    # Three processes, ten connections each: runserver's listen backlog is ten.
    servers = [
        throttled_server(TRUSTED_PROXY_COUNT="1", LOGIN_LIMITS_PER_ACCOUNT="10/day")
        for _ in range(3)
    ]

    with ThreadPoolExecutor(max_workers=30) as pool:
        answers = list(
            pool.map(
                lambda n: api_login(
                    servers[n % 3],
                    "dana",
                    "guess",
                    **{"X-Forwarded-For": f"203.0.113.{n}"},
                ),
                range(30),
            )
        )

    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [401] * 10 + [429] * 20
    assert {body["error_code"] for status, _, body in answers if status == 429} == {
        "account_locked"
    }
