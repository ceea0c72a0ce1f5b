from __future__ import annotations

import random

import pytest

from ingestion.backoff import capped_exponential


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [(0, 1), (1, 1), (2, 2), (3, 4), (5, 16), (6, 30), (40, 30)],
)
def test_doubles_from_the_base_up_to_the_cap(attempt, expected):
    assert capped_exponential(attempt, base=1.0, cap=30.0) == expected


def test_another_factor():
    delays = [capped_exponential(n, base=1, cap=100, factor=3) for n in (1, 2, 3, 5)]
    assert delays == [1, 3, 9, 81]


def test_jitter_takes_off_at_most_its_share():
    rng = random.Random(7)
    delays = [
        capped_exponential(3, base=10, cap=600, jitter=0.5, rng=rng) for _ in range(200)
    ]
    assert all(20 <= delay < 40 for delay in delays)
    assert max(delays) - min(delays) > 10


def test_without_jitter_no_random_number_is_drawn():
    class NoDraws(random.Random):
        def uniform(self, a, b):
            raise AssertionError("drew a random number")

    assert capped_exponential(2, base=1, cap=5, rng=NoDraws()) == 2


@pytest.mark.parametrize("factor", [2, 2.0])
def test_a_very_long_streak_stays_at_the_cap(factor):
    # An outage of hours or an event failing for days: past 1024 failures the
    # step no longer fits a float.
    assert capped_exponential(5000, base=1.0, cap=30.0, factor=factor) == 30.0
