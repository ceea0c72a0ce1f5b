"""What a request pays for its rate limit and a login for its limits (issue 36).

Side by side in one process on the same database: DRF's own scoped throttle on
the default database cache (read the history, decide, write it back: what Curator
used before, and what let concurrent requests through) and Curator's
`UserScopedRateThrottle` (one `INSERT ... ON CONFLICT DO UPDATE`). Each check is
timed alone, the two taking turns, for 50 users at 120/min so that no history
grows past 10 entries and every check is allowed; then `login_attempt_begin`
with the default login limits (seven counters), and attempts from one address
past its 30 a minute (refused: the day's counter taken and given back, the
minute's refusing). Queries are counted with Django's CaptureQueriesContext; on
PostgreSQL each counter write is four (BEGIN, `SET LOCAL synchronous_commit TO
OFF`, the statement, COMMIT) and commits without waiting for the disk.

    python bench/throttles.py [--quick] [--database-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

from common import markdown_table, median, percentile, setup_django, write_section


class FakeUser:
    is_authenticated = True

    def __init__(self, pk: int) -> None:
        self.pk = pk


class FakeRequest:
    def __init__(self, pk: int) -> None:
        self.user = FakeUser(pk)
        self.META = {"REMOTE_ADDR": "127.0.0.1"}
        self.headers: dict[str, str] = {}


class SearchView:
    throttle_scope = "search"


def throttles():
    from rest_framework.throttling import ScopedRateThrottle

    from core.throttling import UserScopedRateThrottle

    class DrfThrottle(ScopedRateThrottle):
        THROTTLE_RATES = {"search": "120/min"}

    return {
        "DRF on the database cache": DrfThrottle,
        "counter row": UserScopedRateThrottle,
    }


def time_checks(checks: int) -> dict[str, tuple[list[float], float]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    classes = throttles()
    timings: dict[str, list[float]] = {name: [] for name in classes}
    queries: dict[str, int] = dict.fromkeys(classes, 0)
    view = SearchView()
    for n in range(checks):
        for name, throttle_class in classes.items():
            request = FakeRequest(n % 50)
            connection.queries_log.clear()  # it keeps 9000: counts would stop
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                assert throttle_class().allow_request(request, view)
                timings[name].append((time.perf_counter() - started) * 1000)
            queries[name] += len(captured)
    return {name: (timings[name], queries[name] / checks) for name in classes}


def time_logins(attempts: int) -> dict[str, tuple[list[float], float]]:
    from django.db import connection
    from django.test import RequestFactory
    from django.test.utils import CaptureQueriesContext

    from accounts.login_attempts import login_attempt_begin
    from core.errors import TooManyRequests

    factory = RequestFactory()
    results: dict[str, tuple[list[float], float]] = {}
    for label, address_of in (
        ("login attempt counted (7 counters)", lambda n: f"10.0.{n // 250}.{n % 250}"),
        ("login attempt refused (address full)", lambda n: "10.9.9.9"),
    ):
        timings: list[float] = []
        queries = 0
        for n in range(attempts):
            request = factory.post("/api/auth/token", REMOTE_ADDR=address_of(n))
            connection.queries_log.clear()
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                with contextlib.suppress(TooManyRequests):
                    login_attempt_begin(request, username=f"user{n}")
                timings.append((time.perf_counter() - started) * 1000)
            queries += len(captured)
        results[label] = (timings[40:], queries / attempts)  # after the 30/min fill
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    url = setup_django(args.database_url)
    database = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    checks = 100 if args.quick else 500
    measured = {**time_checks(checks), **time_logins(checks)}
    rows = [
        [database, name, f"{median(t):.2f}", f"{percentile(t, 0.95):.2f}", q]
        for name, (t, q) in measured.items()
    ]
    table = markdown_table(
        ["database", "check", "median ms", "p95 ms", "queries"], rows
    )
    print(table)
    if not args.quick:
        write_section(
            f"throttles-{database.lower()}",
            f"Rate limits and login limits: cost per check ({database})",
            __doc__.split("\n\n    python")[0].strip()
            + f"\n\n{checks} checks of each kind; load average "
            f"{os.getloadavg()[0]:.1f} (other jobs share the machine).",
            table,
        )


if __name__ == "__main__":
    main()
