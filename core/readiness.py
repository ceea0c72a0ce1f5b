"""Checks that apps add to `/api/health/ready`, whose view sits below them.

A check returns a short state; `ok`, `off` and `cold` (works, but slower at
first) count as ready, `warming` makes
the whole report `warming` (503: a load balancer keeps traffic away until it is
`ready`), anything else `not_ready`.
"""

from __future__ import annotations

from collections.abc import Callable

READY_STATES = frozenset({"ok", "off", "cold"})
WARMING = "warming"

_checks: dict[str, Callable[[], str]] = {}


def register(name: str, check: Callable[[], str]) -> None:
    _checks[name] = check


def registered_checks() -> dict[str, str]:
    return {name: check() for name, check in _checks.items()}
