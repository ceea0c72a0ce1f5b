"""Login throttling and lockout, shared by the API token view and the admin login.

Before a password is checked, `login_attempt_begin` counts the attempt against
its client address and its username (`LOGIN_THROTTLE_PER_*` attempts per
`LOGIN_THROTTLE_WINDOW_SECONDS`; past them `throttled`) and refuses a locked
username (`account_locked`). Each failure is counted per username; the
`LOGIN_LOCKOUT_FAILURES`-th within a window of `LOGIN_LOCKOUT_WINDOW_SECONDS`
locks the username for `LOGIN_LOCKOUT_SECONDS`, and the right password does not
get through a lock. A success forgets the username's failures; after a lock
ends, each further failure in the same window locks again.

Everything lives in the default cache, which every process shares (the database
cache by default, Redis when `CACHE_URL` says so). A counter of limit N is N
keys per window, each taken with `cache.add`, which is atomic in every backend
(an INSERT on the primary key in the database cache, SET NX in Redis): `incr`
on the database cache is a read then a write and would lose counts when guesses
arrive together. Windows are fixed (they start on multiples of their length), so
at a window's end at most twice the limit can pass in a short burst.
"""

from __future__ import annotations

import hashlib
import math
import time
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from core.errors import TooManyRequests


class AccountLocked(TooManyRequests):
    error_code = "account_locked"
    default_detail = "Too many failed logins for this account; try again later."


@dataclass(frozen=True)
class Count:
    allowed: bool
    remaining: int
    retry_after: int


@dataclass(frozen=True)
class FixedWindow:
    """At most `limit` events per subject in each window of `seconds`."""

    name: str
    limit: int
    seconds: int

    def keys(self, subject: str, now: float) -> list[str]:
        digest = hashlib.sha256(subject.encode()).hexdigest()[:32]
        window = int(now // self.seconds)
        return [f"login:{self.name}:{digest}:{window}:{n}" for n in range(self.limit)]

    def count(self, subject: str) -> Count:
        """Take one of the window's keys for `subject`, if one is left."""
        now = time.time()
        retry_after = max(1, math.ceil((now // self.seconds + 1) * self.seconds - now))
        if self.limit <= 0:
            return Count(allowed=True, remaining=1, retry_after=retry_after)
        keys = self.keys(subject, now)
        taken = cache.get_many(keys)
        free = [key for key in keys if key not in taken]
        for position, key in enumerate(free):
            # Kept a second past the window: the database cache stores whole seconds.
            if cache.add(key, 1, timeout=retry_after + 1):
                return Count(True, len(free) - position - 1, retry_after)
        return Count(allowed=False, remaining=0, retry_after=retry_after)

    def forget(self, subject: str) -> None:
        cache.delete_many(self.keys(subject, time.time()))


def _username(username: str) -> str:
    # As the admin's form cleans it (NFKC, stripped) before authenticating, so that
    # "rita " or a full-width "ｒｉｔａ" is not a fresh username to the counters.
    return unicodedata.normalize("NFKC", username).strip().casefold()


def _per_address() -> FixedWindow:
    return FixedWindow(
        "address",
        settings.LOGIN_THROTTLE_PER_ADDRESS,
        settings.LOGIN_THROTTLE_WINDOW_SECONDS,
    )


def _per_username() -> FixedWindow:
    return FixedWindow(
        "username",
        settings.LOGIN_THROTTLE_PER_USERNAME,
        settings.LOGIN_THROTTLE_WINDOW_SECONDS,
    )


def _failures() -> FixedWindow:
    return FixedWindow(
        "failures",
        settings.LOGIN_LOCKOUT_FAILURES,
        settings.LOGIN_LOCKOUT_WINDOW_SECONDS,
    )


def _lock_key(username: str) -> str:
    return f"login:lock:{hashlib.sha256(username.encode()).hexdigest()[:32]}"


def _throttled(retry_after: int) -> TooManyRequests:
    return TooManyRequests(
        retry_after, f"Too many login attempts; try again in {retry_after} seconds."
    )


def login_attempt_begin(*, address: str, username: str) -> None:
    """Count one attempt; raise `TooManyRequests` (or `AccountLocked`) to refuse it."""
    by_address = _per_address().count(address)
    if not by_address.allowed:
        raise _throttled(by_address.retry_after)
    username = _username(username)
    locked_until = cache.get(_lock_key(username))
    if locked_until is not None and locked_until > time.time():
        retry_after = max(1, math.ceil(locked_until - time.time()))
        raise AccountLocked(
            retry_after,
            "Too many failed logins for this account; "
            f"try again in {retry_after} seconds.",
        )
    by_username = _per_username().count(username)
    if not by_username.allowed:
        raise _throttled(by_username.retry_after)


def login_attempt_failed(*, username: str) -> None:
    """Count a wrong password; the last failure allowed locks the username."""
    if settings.LOGIN_LOCKOUT_FAILURES <= 0:
        return
    username = _username(username)
    failures = _failures().count(username)
    if not failures.allowed or failures.remaining == 0:
        seconds = settings.LOGIN_LOCKOUT_SECONDS
        cache.set(_lock_key(username), time.time() + seconds, timeout=seconds + 1)


def login_attempt_succeeded(*, username: str) -> None:
    if settings.LOGIN_LOCKOUT_FAILURES > 0:
        _failures().forget(_username(username))
