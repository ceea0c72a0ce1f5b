"""`ingestion/services.py`: what people ask of ingestion: submit, cancel, retry.

The same writes through the API are tested in `test_api.py`; what workers write
under a claim in `test_claims.py`.
"""

from __future__ import annotations

import pytest

from core.errors import InvalidTransition, NotFound, PermissionDenied
from documents.models import Document, DocumentStatus
from ingestion import services
from ingestion.enqueue import TASK_QUEUED_TOPIC
from ingestion.models import IngestionTask, OutboxEvent, TaskStage, TaskStatus
from retrieval.models import Chunk
from tests.factories import ChunkFactory, DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db


def document_status(document_id) -> str:
    return Document.objects.values_list("status", flat=True).get(pk=document_id)


def announced(task) -> list[dict]:
    return [
        event.payload
        for event in OutboxEvent.objects.filter(topic=TASK_QUEUED_TOPIC)
        if event.payload["task_id"] == str(task.pk)
    ]


class TestSubmit:
    def test_the_draft_is_queued_and_announced(self, editor, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base)

        task = services.document_submit(user=editor, document_id=document.pk)

        assert (task.status, task.attempt, task.submitted_by) == (
            TaskStatus.QUEUED,
            0,
            editor,
        )
        assert document_status(document.pk) == DocumentStatus.PROCESSING
        assert announced(task) == [
            {"task_id": str(task.pk), "document_id": str(document.pk)}
        ]

    def test_a_document_that_is_no_draft_is_refused_and_nothing_queued(
        self, editor, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

        with pytest.raises(InvalidTransition):
            services.document_submit(user=editor, document_id=document.pk)

        assert not IngestionTask.objects.exists()
        assert not OutboxEvent.objects.exists()
        assert document_status(document.pk) == DocumentStatus.REVIEW_PENDING

    def test_a_viewer_may_not_and_a_non_member_cannot_see_it(
        self, viewer, member, knowledge_base, other_knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base)
        outsider = member(kb=other_knowledge_base, username="olga")

        with pytest.raises(PermissionDenied):
            services.document_submit(user=viewer, document_id=document.pk)
        with pytest.raises(NotFound):
            services.document_submit(user=outsider, document_id=document.pk)
        assert not IngestionTask.objects.exists()


class TestCancel:
    @pytest.mark.parametrize("state", ["queued", "running", "retry_wait"])
    def test_the_task_stops_and_the_document_is_a_draft_again(
        self, editor, knowledge_base, state
    ):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base,
            **({} if state == "queued" else {state: True}),
        )
        # Rows a running worker may have written already: none may outlive this.
        ChunkFactory(document=task.document)

        cancelled = services.ingestion_task_cancel(user=editor, task_id=task.pk)

        assert cancelled.status == TaskStatus.CANCELLED
        assert cancelled.finished_at is not None
        assert document_status(task.document_id) == DocumentStatus.DRAFT
        assert not Chunk.objects.filter(document_id=task.document_id).exists()

    @pytest.mark.parametrize("state", ["succeeded", "failed"])
    def test_a_finished_task_cannot_be_cancelled(self, editor, knowledge_base, state):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base, **{state: True}
        )
        ChunkFactory(document=task.document)

        with pytest.raises(InvalidTransition):
            services.ingestion_task_cancel(user=editor, task_id=task.pk)

        assert IngestionTask.objects.get(pk=task.pk).status == state
        assert Chunk.objects.filter(document_id=task.document_id).exists()

    def test_a_viewer_cannot_cancel(self, viewer, knowledge_base):
        task = IngestionTaskFactory(document__knowledge_base=knowledge_base)

        with pytest.raises(PermissionDenied):
            services.ingestion_task_cancel(user=viewer, task_id=task.pk)
        assert IngestionTask.objects.get(pk=task.pk).status == TaskStatus.QUEUED


class TestRetry:
    def test_the_same_task_is_queued_again_for_whoever_asked(
        self, editor, knowledge_base
    ):
        task = IngestionTaskFactory(
            document__knowledge_base=knowledge_base,
            failed=True,
            stage=TaskStage.PARSE,
            completed=3,
            total=4,
            error_detail="The PDF is damaged.",
            worker_id="w-1",
        )

        retried = services.ingestion_task_retry(user=editor, task_id=task.pk)

        assert retried.pk == task.pk
        assert (retried.status, retried.attempt, retried.submitted_by) == (
            TaskStatus.QUEUED,
            1,  # kept: the next claim is attempt 2
            editor,
        )
        assert (retried.stage, retried.completed, retried.total) == (
            TaskStage.DOWNLOAD,
            0,
            0,
        )
        assert (retried.error_code, retried.error_detail, retried.worker_id) == (
            None,
            None,
            None,
        )
        assert retried.finished_at is None
        assert document_status(task.document_id) == DocumentStatus.PROCESSING
        assert len(announced(task)) == 1

    def test_only_the_documents_latest_task_can_be_retried(
        self, editor, knowledge_base
    ):
        older = IngestionTaskFactory(
            document__knowledge_base=knowledge_base, failed=True
        )
        IngestionTaskFactory(document=older.document, failed=True)

        with pytest.raises(InvalidTransition, match="latest task"):
            services.ingestion_task_retry(user=editor, task_id=older.pk)
        assert IngestionTask.objects.get(pk=older.pk).status == TaskStatus.FAILED

    def test_a_task_that_has_not_failed_cannot_be_retried(self, editor, knowledge_base):
        task = IngestionTaskFactory(document__knowledge_base=knowledge_base)

        with pytest.raises(InvalidTransition):
            services.ingestion_task_retry(user=editor, task_id=task.pk)
        assert not announced(task)
