from __future__ import annotations

import pytest
from django.contrib.messages import get_messages

from documents.models import Document
from ingestion.models import IngestionTask
from tests.factories import IngestionTaskFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/ingestion/ingestiontask/"


@pytest.fixture
def reviewer_client(client, reviewer):
    client.force_login(reviewer)
    return client


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def act(client, action, tasks):
    return client.post(
        CHANGELIST,
        {"action": action, "_selected_action": [str(t.pk) for t in tasks]},
        follow=True,
    )


def test_task_list_shows_progress_and_is_scoped(
    reviewer_client, knowledge_base, other_knowledge_base
):
    mine = IngestionTaskFactory(
        running=True,
        document__knowledge_base=knowledge_base,
        document__filename="mine.md",
        stage="embedding",
        completed=5,
        total=10,
    )
    IngestionTaskFactory(
        document__knowledge_base=other_knowledge_base, document__filename="theirs.md"
    )

    response = reviewer_client.get(CHANGELIST)

    assert response.status_code == 200
    assert b"mine.md" in response.content
    assert b"theirs.md" not in response.content
    assert b'<progress value="50" max="100"' in response.content
    assert b"embedding 5/10" in response.content
    assert reviewer_client.get(f"{CHANGELIST}{mine.pk}/change/").status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "status__exact=failed",
        "stage__exact=parse",
        "error_code__exact=parse_error",
        "document__knowledge_base__id__exact=kb-company",
    ],
)
def test_filters(reviewer_client, knowledge_base, query):
    IngestionTaskFactory(
        failed=True,
        document__knowledge_base=knowledge_base,
        document__filename="broken.pdf",
        stage="parse",
        error_code="parse_error",
    )
    response = reviewer_client.get(f"{CHANGELIST}?{query}")
    assert response.status_code == 200
    assert b"broken.pdf" in response.content


def test_cancel_action_reports_each_row(reviewer_client, knowledge_base):
    queued = IngestionTaskFactory(document__knowledge_base=knowledge_base)
    done = IngestionTaskFactory(succeeded=True, document__knowledge_base=knowledge_base)

    response = act(reviewer_client, "cancel_tasks", [queued, done])

    assert IngestionTask.objects.get(pk=queued.pk).status == "cancelled"
    assert Document.objects.get(pk=queued.document_id).status == "draft"
    assert IngestionTask.objects.get(pk=done.pk).status == "succeeded"
    reported = messages_of(response)
    assert any(": cancelled." in m for m in reported)
    assert any("not cancelled (invalid_transition)" in m for m in reported)


def test_retry_action(reviewer_client, knowledge_base):
    failed = IngestionTaskFactory(failed=True, document__knowledge_base=knowledge_base)

    response = act(reviewer_client, "retry_tasks", [failed])

    failed.refresh_from_db()
    assert (failed.status, failed.attempt, failed.error_code) == ("queued", 1, None)
    assert Document.objects.get(pk=failed.document_id).status == "processing"
    assert any("queued again" in m for m in messages_of(response))


def test_document_page_shows_latest_task_and_history(reviewer_client, knowledge_base):
    task = IngestionTaskFactory(
        failed=True,
        document__knowledge_base=knowledge_base,
        error_detail="password-protected PDF",
    )
    response = reviewer_client.get(
        f"/admin/documents/document/{task.document_id}/change/"
    )
    assert response.status_code == 200
    assert b"Ingestion tasks (latest first)" in response.content
    assert b"password-protected PDF" in response.content
