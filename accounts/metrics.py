"""Login lockouts for `/metrics`, read from the database at scrape time, so any
API process answers with the same numbers."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from core import counters

from .login_attempts import LOCKOUT_TOTALS, SUBJECTS


class LoginCollector(Collector):
    def collect(self) -> Iterator[CounterMetricFamily]:
        totals = counters.totals(LOCKOUT_TOTALS)
        lockouts = CounterMetricFamily(
            "curator_login_lockouts",
            "Failed logins that filled a login limit, by limit "
            "(docs/security/auth.md).",
            labels=["limit"],
        )
        for subject in SUBJECTS:
            lockouts.add_metric([subject.name], totals.get(subject.name, 0))
        yield lockouts
