"""core/counters.py: counts that hold when requests arrive together, on SQLite and
PostgreSQL (`DATABASE_URL`), and the rates that configure them (core/rates.py)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from core import counters
from core.models import Counter
from core.rates import Rate, parse_rate, parse_rates

pytestmark = pytest.mark.django_db


def test_a_subject_is_counted_up_to_its_limit_then_refused_until_its_window_ends():
    answers = [counters.take("vera", limit=3, seconds=60) for _ in range(4)]

    assert [(taken.allowed, taken.count) for taken in answers] == [
        (True, 1),
        (True, 2),
        (True, 3),
        (False, 3),
    ]
    assert 59 <= answers[-1].retry_after <= 60
    assert counters.take("val", limit=3, seconds=60).allowed  # others are apart


def test_the_next_window_starts_with_the_first_event_after_one_ends():
    assert counters.take("vera", limit=1, seconds=0.3).allowed
    assert not counters.take("vera", limit=1, seconds=0.3).allowed

    time.sleep(0.4)  # the window's end is the behaviour under test

    again = counters.take("vera", limit=1, seconds=60)
    assert (again.allowed, again.count) == (True, 1)
    assert again.retry_after == 60  # a new window, as long as this take says


def test_an_event_given_back_frees_its_place_once():
    for _ in range(2):
        counters.take("vera", limit=2, seconds=60)

    counters.give_back(["vera"])
    assert counters.take("vera", limit=2, seconds=60).allowed
    assert not counters.take("vera", limit=2, seconds=60).allowed
    counters.give_back(["vera", "nobody"])  # a subject with no row is no error
    counters.forget(["vera"])
    assert counters.take("vera", limit=2, seconds=60).count == 1


def test_remembered_subjects_and_totals():
    counters.remember("known", seconds=60)
    counters.remember("gone", seconds=-1)
    for _ in range(3):
        counters.add_to_total("total:things:a")
    counters.add_to_total("total:things:b")

    assert counters.remembered("known")
    assert not counters.remembered("gone")
    assert not counters.remembered("never")
    assert counters.totals("total:things:") == {"a": 3, "b": 1}


def test_purge_deletes_ended_windows_only():
    counters.take("ended", limit=5, seconds=-1)
    counters.take("running", limit=5, seconds=60)
    counters.add_to_total("total:things:a")

    assert counters.purge() == 1
    assert sorted(Counter.objects.values_list("subject", flat=True)) == [
        "running",
        "total:things:a",
    ]


@pytest.mark.django_db(transaction=True)
def test_thirty_takes_at_once_count_exactly_the_limit():
    """Thirty threads, each with its own database connection, released together
    against a limit of ten: ten are counted, twenty refused, the row says ten."""
    start = threading.Barrier(30, timeout=30)
    answers: list[counters.Taken] = []
    errors: list[BaseException] = []

    def take() -> None:
        try:
            start.wait()
            answers.append(counters.take("vera", limit=10, seconds=60))
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=take) for _ in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors
    assert sum(taken.allowed for taken in answers) == 10
    assert sorted(taken.count for taken in answers if taken.allowed) == list(
        range(1, 11)
    )
    assert Counter.objects.get(subject="vera").count == 10


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("120/min", Rate(120, 60)),
        ("10/15min", Rate(10, 900)),
        ("300/hour", Rate(300, 3600)),
        ("1/s", Rate(1, 1)),
        (" 20/day ", Rate(20, 86400)),
        ("2/3s", Rate(2, 3)),
    ],
)
def test_rates(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["120/week", "0/min", "10/0min", "min", "10", "-1/s"])
def test_what_is_not_a_rate(text):
    with pytest.raises(ValueError, match="is not a rate"):
        parse_rate(text)


def test_lists_of_rates():
    assert parse_rates("5/min, 20/day") == (Rate(5, 60), Rate(20, 86400))
    assert parse_rates("") == ()
