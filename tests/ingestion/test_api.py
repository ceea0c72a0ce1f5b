from __future__ import annotations

import uuid

import pytest

from documents.models import Document, DocumentStatus, Role
from ingestion.models import IngestionTask, OutboxEvent
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db

TASK_FIELDS = {
    "task_id",
    "document_id",
    "status",
    "stage",
    "completed",
    "total",
    "attempt",
    "lane",
    "yields",
    "yielded_at",
    "waiting_for_turn",
    "error_code",
    "error_detail",
    "worker_id",
    "available_at",
    "lease_expires_at",
    "created_at",
    "updated_at",
    "started_at",
    "finished_at",
}


class TestSubmit:
    def test_submit_answers_202_with_the_queued_task(
        self, editor, client_for, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base)

        response = client_for(editor).post(f"/api/documents/{document.pk}/submit")

        assert response.status_code == 202
        body = response.json()
        assert set(body) == TASK_FIELDS
        task = IngestionTask.objects.get()
        assert body["task_id"] == str(task.pk)
        assert body["document_id"] == str(document.pk)
        assert {
            k: body[k]
            for k in (
                "status",
                "stage",
                "completed",
                "total",
                "attempt",
                "error_code",
                "error_detail",
            )
        } == {
            "status": "queued",
            "stage": "download",
            "completed": 0,
            "total": 0,
            "attempt": 0,
            "error_code": None,
            "error_detail": None,
        }
        assert body["created_at"]
        assert body["updated_at"]
        document.refresh_from_db()
        assert document.status == DocumentStatus.PROCESSING
        assert document.lock_version == 1
        event = OutboxEvent.objects.get()
        assert event.topic == "ingestion.task.queued"
        assert event.payload["task_id"] == str(task.pk)
        assert event.delivered_at is None

    @pytest.mark.parametrize(
        "state", ["processing", "review_pending", "published", "archived", "failed"]
    )
    def test_not_draft_is_a_conflict_and_creates_nothing(
        self, editor, client_for, knowledge_base, state
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, status=state)

        response = client_for(editor).post(f"/api/documents/{document.pk}/submit")

        assert response.status_code == 409
        assert response.json()["error_code"] == "invalid_transition"
        assert not IngestionTask.objects.exists()
        assert not OutboxEvent.objects.exists()
        assert Document.objects.get(pk=document.pk).status == state

    def test_viewer_cannot_submit(self, viewer, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base)
        response = client_for(viewer).post(f"/api/documents/{document.pk}/submit")
        assert response.status_code == 403
        assert not IngestionTask.objects.exists()

    def test_invisible_document_is_not_found(
        self, editor, client_for, other_knowledge_base
    ):
        document = DocumentFactory(knowledge_base=other_knowledge_base)
        response = client_for(editor).post(f"/api/documents/{document.pk}/submit")
        assert response.status_code == 404


class TestObserve:
    def test_task_detail(self, editor, client_for, knowledge_base):
        task = IngestionTaskFactory(
            running=True,
            document__knowledge_base=knowledge_base,
            stage="embedding",
            completed=3,
            total=9,
            worker_id="w-1",
        )
        response = client_for(editor).get(f"/api/ingestion-tasks/{task.pk}")
        assert response.status_code == 200
        body = response.json()
        assert set(body) == TASK_FIELDS
        assert (body["stage"], body["completed"], body["total"]) == ("embedding", 3, 9)
        assert body["worker_id"] == "w-1"
        assert body["available_at"] is None

    def test_task_of_another_knowledge_base_is_not_found(
        self, viewer, client_for, other_knowledge_base
    ):
        task = IngestionTaskFactory(document__knowledge_base=other_knowledge_base)
        for task_id in (task.pk, uuid.uuid4()):
            response = client_for(viewer).get(f"/api/ingestion-tasks/{task_id}")
            assert response.status_code == 404
            assert response.json()["error_code"] == "not_found"

    @pytest.mark.parametrize(
        "state", ["draft", "processing", "review_pending", "failed", "archived"]
    )
    def test_a_viewer_reads_a_task_only_as_its_document(
        self, viewer, client_for, knowledge_base, state
    ):
        """Not found, like the version's task list and the version itself: a
        viewer reads published versions only, and learns nothing of others."""
        task = IngestionTaskFactory(
            failed=True, document__knowledge_base=knowledge_base, document__status=state
        )
        client = client_for(viewer)

        for path in (
            f"/api/ingestion-tasks/{task.pk}",
            f"/api/documents/{task.document_id}/ingestion-tasks",
            f"/api/documents/{task.document_id}",
        ):
            response = client.get(path)
            assert (path, response.status_code) == (path, 404)
            assert response.json()["error_code"] == "not_found"

    def test_a_viewer_reads_the_tasks_of_a_published_version(
        self, viewer, client_for, knowledge_base
    ):
        task = IngestionTaskFactory(
            succeeded=True,
            document__knowledge_base=knowledge_base,
            document__status="published",
        )
        client = client_for(viewer)

        assert client.get(f"/api/ingestion-tasks/{task.pk}").status_code == 200
        listed = client.get(f"/api/documents/{task.document_id}/ingestion-tasks")
        assert [t["task_id"] for t in listed.json()["results"]] == [str(task.pk)]

    def test_document_history_newest_first(self, editor, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, processing=True)
        first = IngestionTaskFactory(document=document, status="cancelled")
        second = IngestionTaskFactory(document=document, status="queued")

        response = client_for(editor).get(
            f"/api/documents/{document.pk}/ingestion-tasks"
        )

        assert response.status_code == 200
        ids = [t["task_id"] for t in response.json()["results"]]
        assert ids == [str(second.pk), str(first.pk)]

    def test_history_of_invisible_document_is_not_found(
        self, viewer, client_for, other_knowledge_base
    ):
        document = DocumentFactory(knowledge_base=other_knowledge_base)
        response = client_for(viewer).get(
            f"/api/documents/{document.pk}/ingestion-tasks"
        )
        assert response.status_code == 404


class TestCancel:
    @pytest.mark.parametrize("state", ["queued", "running", "retry_wait"])
    def test_cancel_active_task(self, editor, client_for, knowledge_base, state):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base, status=state
        )

        response = client_for(editor).delete(f"/api/ingestion-tasks/{task.pk}")

        assert response.status_code == 200
        assert response.json()["status"] == "cancelled"
        assert response.json()["finished_at"] is not None
        task.refresh_from_db()
        assert task.status == "cancelled"
        assert Document.objects.get(pk=task.document_id).status == "draft"

    @pytest.mark.parametrize("state", ["succeeded", "failed", "cancelled"])
    def test_cancel_finished_task_is_a_conflict(
        self, editor, client_for, knowledge_base, state
    ):
        doc_state = {"succeeded": "review_pending", "failed": "failed"}.get(
            state, "draft"
        )
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base,
            document__status=doc_state,
            status=state,
        )

        response = client_for(editor).delete(f"/api/ingestion-tasks/{task.pk}")

        assert response.status_code == 409
        assert response.json()["error_code"] == "invalid_transition"
        task.refresh_from_db()
        assert task.status == state
        assert Document.objects.get(pk=task.document_id).status == doc_state

    def test_viewer_cannot_cancel(self, viewer, client_for, knowledge_base):
        task = IngestionTaskFactory(document__knowledge_base=knowledge_base)
        response = client_for(viewer).delete(f"/api/ingestion-tasks/{task.pk}")
        assert response.status_code == 403
        task.refresh_from_db()
        assert task.status == "queued"


class TestRetry:
    def test_retry_requeues_the_same_row(self, editor, client_for, knowledge_base):
        task = IngestionTaskFactory(
            failed=True,
            document__knowledge_base=knowledge_base,
            stage="parse",
            completed=1,
            total=1,
            error_detail="damaged PDF",
            worker_id="w-1",
        )

        response = client_for(editor).post(f"/api/ingestion-tasks/{task.pk}/retry")

        assert response.status_code == 202
        body = response.json()
        assert body["task_id"] == str(task.pk)
        assert {
            k: body[k]
            for k in (
                "status",
                "stage",
                "completed",
                "total",
                "attempt",
                "error_code",
                "error_detail",
                "worker_id",
            )
        } == {
            "status": "queued",
            "stage": "download",
            "completed": 0,
            "total": 0,
            "attempt": 1,
            "error_code": None,
            "error_detail": None,
            "worker_id": None,
        }
        assert IngestionTask.objects.count() == 1
        assert Document.objects.get(pk=task.document_id).status == "processing"
        assert OutboxEvent.objects.filter(payload__task_id=str(task.pk)).count() == 1

    def test_cancelled_task_cannot_be_retried(self, editor, client_for, knowledge_base):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base,
            document__status="draft",
            status="cancelled",
        )
        response = client_for(editor).post(f"/api/ingestion-tasks/{task.pk}/retry")
        assert response.status_code == 409
        task.refresh_from_db()
        assert task.status == "cancelled"

    def test_failed_task_of_a_draft_document_cannot_be_retried(
        self, editor, client_for, knowledge_base
    ):
        task = IngestionTaskFactory(
            failed=True,
            document__knowledge_base=knowledge_base,
            document__status="draft",
        )
        response = client_for(editor).post(f"/api/ingestion-tasks/{task.pk}/retry")
        assert response.status_code == 409
        task.refresh_from_db()
        assert task.status == "failed"
        assert Document.objects.get(pk=task.document_id).status == "draft"

    @pytest.mark.parametrize("state", ["queued", "running", "succeeded"])
    def test_unfailed_task_cannot_be_retried(
        self, editor, client_for, knowledge_base, state
    ):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base, status=state
        )
        response = client_for(editor).post(f"/api/ingestion-tasks/{task.pk}/retry")
        assert response.status_code == 409

    def test_viewer_cannot_retry(self, member, client_for, knowledge_base):
        task = IngestionTaskFactory(
            failed=True, document__knowledge_base=knowledge_base
        )
        response = client_for(member(Role.VIEWER)).post(
            f"/api/ingestion-tasks/{task.pk}/retry"
        )
        assert response.status_code == 403
