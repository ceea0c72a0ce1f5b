"""The login rule the API token view, the admin login and the pages' sign-in share.

`login_attempt_begin` runs before a password is checked. The attempt counts as a
failure from then until its password proves right (a successful login gives it
back), so guesses sent together cannot slip past a limit while their passwords
are being checked. Failures are counted against three subjects, each with the
rates of its setting (`core/counters.py` counts them atomically):

- `address`: from one client address, whatever the username. Stops one
  machine from spraying a common password over many accounts.
- `account_at_address`: for one username from one address, in tiers that slow
  guessing more and more (5 a minute, 10 an hour, 20 a day); a success there
  forgets them. Stops one machine guessing one account, without touching the
  account's owner anywhere else.
- `account`: for one username from everywhere, much higher. Stops guessing from
  many machines; past it the username is locked (`account_locked`) except from
  addresses where its user signed in within `LOGIN_KNOWN_ADDRESS_DAYS`.

Past a limit the answer is `429` with `Retry-After` (the seconds left in that
limit's window). A failure that fills a limit is logged and counted for
`/metrics` (`curator_login_lockouts_total`). An IPv6 address counts as its /64,
which one subscriber usually holds whole.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.http import HttpRequest

from core import counters
from core.errors import TooManyRequests
from core.rates import Rate, parse_rates

from .client_address import client_address

logger = logging.getLogger(__name__)

# Subjects of the totals /metrics reads, followed by the limit's subject name.
LOCKOUT_TOTALS = "total:login_lockouts:"
_ATTRIBUTE = "curator_login_attempt"
# A username is logged no longer than a real one can be (the user model's
# field): a made-up one may be megabytes long.
USERNAME_LOGGED = 150


class AccountLocked(TooManyRequests):
    error_code = "account_locked"
    default_detail = "Too many failed logins for this account; try again later."


def _throttled(retry_after: int) -> TooManyRequests:
    return TooManyRequests(
        retry_after, f"Too many login attempts; try again in {retry_after} seconds."
    )


def _locked(retry_after: int) -> AccountLocked:
    return AccountLocked(
        retry_after,
        f"Too many failed logins for this account; try again in {retry_after} seconds.",
    )


@dataclass(frozen=True)
class Subject:
    """What failures are counted against, and how a full limit refuses."""

    name: str
    setting: str
    # (username, address) -> who is counted.
    identity: Callable[[str, str], str]
    refusal: Callable[[int], TooManyRequests]
    spares_known_addresses: bool = False

    def rates(self) -> list[Rate]:
        """Longest window first: a refusal then says the longest wait."""
        rates = parse_rates(getattr(settings, self.setting))
        return sorted(rates, key=lambda rate: rate.seconds, reverse=True)


ADDRESS = Subject(
    "address", "LOGIN_LIMITS_PER_ADDRESS", lambda user, address: address, _throttled
)
ACCOUNT_AT_ADDRESS = Subject(
    "account_at_address",
    "LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS",
    lambda user, address: f"{user}\0{address}",
    _throttled,
)
ACCOUNT = Subject(
    "account",
    "LOGIN_LIMITS_PER_ACCOUNT",
    lambda user, address: user,
    _locked,
    spares_known_addresses=True,
)
# In this order: an attempt refused by one subject is not counted by the next.
SUBJECTS = (ADDRESS, ACCOUNT_AT_ADDRESS, ACCOUNT)


@dataclass(frozen=True)
class Fill:
    """A limit this attempt filled: reached if the attempt fails."""

    subject: str
    rate: Rate
    retry_after: int


@dataclass
class LoginAttempt:
    username: str
    address: str
    held: list[str] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)

    def counter(self, subject: Subject, rate: Rate) -> str:
        who = subject.identity(self.username, self.address)
        digest = hashlib.sha256(who.encode()).hexdigest()[:32]
        return f"login:{subject.name}:{rate}:{digest}"

    def known_address(self) -> str:
        who = f"{self.username}\0{self.address}"
        return f"login:known:{hashlib.sha256(who.encode()).hexdigest()[:32]}"


def _username(username: str) -> str:
    # As the admin's form cleans it (NFKC, stripped) before authenticating, so that
    # "rita " or a full-width "ｒｉｔａ" is not a fresh username to the counters.
    return unicodedata.normalize("NFKC", username).strip().casefold()


def _network(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _hold(attempt: LoginAttempt, subject: Subject, rate: Rate) -> None:
    counter = attempt.counter(subject, rate)
    taken = counters.take(counter, limit=rate.count, seconds=rate.seconds)
    if taken.allowed:
        attempt.held.append(counter)
        if taken.count == rate.count:
            attempt.fills.append(Fill(subject.name, rate, taken.retry_after))
    elif not (
        subject.spares_known_addresses and counters.remembered(attempt.known_address())
    ):
        raise subject.refusal(taken.retry_after)


def login_attempt_begin(request: HttpRequest, *, username: str) -> LoginAttempt:
    """Count one attempt, or raise `TooManyRequests` (or `AccountLocked`) to
    refuse it. The attempt stays on `request` for `login_attempt_end`."""
    attempt = LoginAttempt(_username(username), _network(client_address(request)))
    try:
        for subject in SUBJECTS:
            for rate in subject.rates():
                _hold(attempt, subject, rate)
    except TooManyRequests:
        counters.give_back(attempt.held)
        raise
    setattr(request, _ATTRIBUTE, attempt)
    return attempt


def login_attempt_end(request: HttpRequest | None, *, succeeded: bool) -> None:
    """Settle the attempt begun on `request`, once (Django's login signals call it)."""
    attempt = getattr(request, _ATTRIBUTE, None)
    if attempt is None:
        return
    setattr(request, _ATTRIBUTE, None)
    if succeeded:
        _succeeded(attempt)
    else:
        _failed(attempt)


def _succeeded(attempt: LoginAttempt) -> None:
    counters.give_back(attempt.held)
    counters.forget(
        attempt.counter(ACCOUNT_AT_ADDRESS, rate) for rate in ACCOUNT_AT_ADDRESS.rates()
    )
    counters.remember(
        attempt.known_address(), seconds=settings.LOGIN_KNOWN_ADDRESS_DAYS * 86400
    )


def _failed(attempt: LoginAttempt) -> None:
    for fill in attempt.fills:
        logger.warning(
            "Login limit reached: %s %s, username %r from %s; refused for %s seconds",
            fill.subject,
            fill.rate,
            attempt.username[:USERNAME_LOGGED],
            attempt.address,
            fill.retry_after,
        )
        counters.add_to_total(f"{LOCKOUT_TOTALS}{fill.subject}")
