"""Rates as the settings write them: "120/min", "10/15min", "5/min,20/day".

Imports nothing from Django, so `config/settings.py` can check a rate at start-up
with the same code that reads it at each request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
_RATE = re.compile(r"([1-9]\d*)/([1-9]\d*)?(" + "|".join(UNITS) + ")")


@dataclass(frozen=True)
class Rate:
    """At most `count` events in a window of `seconds`."""

    count: int
    seconds: int

    def __str__(self) -> str:
        return f"{self.count}/{self.seconds}s"


def parse_rate(text: str) -> Rate:
    """One rate: a count of at least 1, a slash, an optional multiple, a unit."""
    match = _RATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a rate")
    count, multiple, unit = match.groups()
    return Rate(int(count), int(multiple or 1) * UNITS[unit])


def parse_rates(text: str) -> tuple[Rate, ...]:
    """Rates separated by commas; an empty text is no rate at all."""
    return tuple(parse_rate(part) for part in text.split(",") if part.strip())
