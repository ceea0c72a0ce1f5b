from __future__ import annotations

import itertools

import pytest

from core.errors import InvalidTransition
from ingestion.models import TaskStatus
from ingestion.transitions import TASK_TRANSITIONS, transition_task
from tests.factories import IngestionTaskFactory

EXPECTED = {
    ("queued", "claim"): "running",
    ("retry_wait", "claim"): "running",
    ("running", "succeed"): "succeeded",
    ("running", "fail"): "failed",
    ("running", "backoff"): "retry_wait",
    ("running", "release"): "queued",
    ("running", "yield_turn"): "queued",
    ("queued", "cancel"): "cancelled",
    ("running", "cancel"): "cancelled",
    ("retry_wait", "cancel"): "cancelled",
    ("failed", "retry"): "queued",
}


def test_table_is_exactly_the_documented_graph():
    table = {
        (source, action): transition.target
        for action, transition in TASK_TRANSITIONS.items()
        for source in transition.sources
    }
    assert table == EXPECTED


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("state", "action"), list(itertools.product(TaskStatus.values, TASK_TRANSITIONS))
)
def test_every_state_action_pair(state, action):
    task = IngestionTaskFactory(status=state, attempt=2)
    expected = EXPECTED.get((state, action))

    if expected is None:
        with pytest.raises(InvalidTransition):
            transition_task(task.pk, action)
        task.refresh_from_db()
        assert task.status == state
    else:
        assert transition_task(task.pk, action).status == expected
        task.refresh_from_db()
        assert task.status == expected
    assert task.attempt == 2
