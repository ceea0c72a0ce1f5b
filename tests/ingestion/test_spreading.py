from __future__ import annotations

import random

import pytest

from ingestion.spreading import CandidatePicker
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db


def queue(knowledge_base, submit, count: int) -> list:
    return [
        submit(DocumentFactory(knowledge_base=knowledge_base)).pk for _ in range(count)
    ]


def test_nothing_claimable_is_none():
    assert CandidatePicker().next_candidate() is None


def test_in_claim_order_until_a_miss_then_spread_over_the_window(
    knowledge_base, submit, settings
):
    settings.INGESTION_CLAIM_WINDOW = 2
    tasks = queue(knowledge_base, submit, 8)
    picker = CandidatePicker(rng=random.Random(3))

    assert {picker.next_candidate().task_id for _ in range(5)} == {tasks[0]}

    picker.missed()
    picked = {picker.next_candidate().task_id for _ in range(40)}
    assert picked <= set(tasks[:4])  # the first 2 x INGESTION_CLAIM_WINDOW
    assert len(picked) > 1


def test_past_the_end_of_a_short_queue_the_first_is_taken(
    knowledge_base, submit, settings
):
    settings.INGESTION_CLAIM_WINDOW = 16
    [only] = queue(knowledge_base, submit, 1)
    picker = CandidatePicker(rng=random.Random(1))
    picker.missed()
    assert {picker.next_candidate().task_id for _ in range(20)} == {only}
