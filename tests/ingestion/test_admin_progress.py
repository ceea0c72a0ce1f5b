"""The task list refreshes itself from a JSON view; failures read as sentences."""

from __future__ import annotations

import pytest

from ingestion.errors import ERROR_HELP, describe, error_help
from ingestion.models import ErrorCode
from tests.factories import IngestionTaskFactory

pytestmark = pytest.mark.django_db

PROGRESS = "/admin/ingestion/ingestiontask/progress/"


@pytest.fixture
def reviewer_client(client, reviewer):
    client.force_login(reviewer)
    return client


def test_progress_view_reports_visible_tasks_only(
    reviewer_client, knowledge_base, other_knowledge_base
):
    mine = IngestionTaskFactory(
        running=True,
        document__knowledge_base=knowledge_base,
        stage="embedding",
        completed=3,
        total=4,
    )
    theirs = IngestionTaskFactory(document__knowledge_base=other_knowledge_base)

    response = reviewer_client.get(
        PROGRESS, {"ids": f"{mine.pk},{theirs.pk},not-a-uuid"}
    )

    assert response.status_code == 200
    assert response.json() == {
        "tasks": [
            {
                "id": str(mine.pk),
                "status": "running",
                "status_display": "Running",
                "stage": "embedding",
                "completed": 3,
                "total": 4,
                "percent": 75,
                "active": True,
                "error": "",
                "status_text": "running",
            }
        ]
    }


def test_progress_view_needs_an_admin_login(client, knowledge_base):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base)
    response = client.get(PROGRESS, {"ids": str(task.pk)})
    assert response.status_code == 302


def test_task_list_marks_bars_for_refresh(reviewer_client, knowledge_base):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base)

    response = reviewer_client.get("/admin/ingestion/ingestiontask/")

    assert f'data-task-id="{task.pk}"'.encode() in response.content
    assert b'data-active="true"' in response.content
    assert b"ingestion/progress.js" in response.content


def test_every_error_code_has_a_sentence_and_a_next_step():
    assert set(ERROR_HELP) == set(ErrorCode.values)
    for code in ErrorCode.values:
        help_ = error_help(code)
        assert help_.sentence.endswith(".")
        assert help_.next_step.endswith(".")
    assert error_help(None) is None
    assert describe("something_new").startswith("something_new: ")


@pytest.mark.parametrize("code", ErrorCode.values)
def test_task_list_explains_each_code(reviewer_client, knowledge_base, code):
    IngestionTaskFactory(
        failed=True, document__knowledge_base=knowledge_base, error_code=code
    )

    response = reviewer_client.get("/admin/ingestion/ingestiontask/")

    help_ = error_help(code)
    assert f"<code>{code}</code>".encode() in response.content
    assert help_.next_step.encode() in response.content
