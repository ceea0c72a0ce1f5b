"""Checks that apps add to `/api/health/ready`, whose view sits below them.

A check returns a short state. Required checks decide the report: `ok`, `off` and
`cold` (works, but slower at first) count as ready, `warming` makes the whole
report `warming` (503: a load balancer keeps traffic away until it is `ready`),
anything else `not_ready`. Reported checks are shown and never keep a process out
of traffic; their hints tell an operator, per state, what to do about it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

READY_STATES = frozenset({"ok", "off", "cold"})
WARMING = "warming"


@dataclass(frozen=True)
class _Check:
    run: Callable[[], str]
    required: bool
    hints: Mapping[str, str] = field(default_factory=dict)


_checks: dict[str, _Check] = {}


def register(
    name: str,
    check: Callable[[], str],
    *,
    required: bool = True,
    hints: Mapping[str, str] | None = None,
) -> None:
    _checks[name] = _Check(check, required, dict(hints or {}))


def required_checks() -> dict[str, str]:
    return {name: check.run() for name, check in _checks.items() if check.required}


def reported_checks() -> dict[str, str]:
    return {name: check.run() for name, check in _checks.items() if not check.required}


def hints_for(states: Mapping[str, str]) -> dict[str, str]:
    """The hints of the checks whose state in `states` has one."""
    return {
        name: check.hints[states[name]]
        for name, check in _checks.items()
        if states.get(name) in check.hints
    }
