"""`ingestion/selectors.py`: which tasks a user sees, and the operators' summary.

The same reads through the API are tested in `test_api.py`, the summary as the
`ingestion_status` command prints it in `test_operations.py`.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from core.errors import NotFound
from documents.models import DocumentStatus
from ingestion import selectors
from ingestion.models import OutboxEvent, TaskStatus
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db


class TestVisibility:
    def test_a_member_sees_the_tasks_of_their_knowledge_bases_only(
        self, editor, knowledge_base, other_knowledge_base
    ):
        mine = IngestionTaskFactory(document__knowledge_base=knowledge_base)
        theirs = IngestionTaskFactory(document__knowledge_base=other_knowledge_base)

        assert list(selectors.tasks_visible_to(editor)) == [mine]
        assert selectors.visible_task(editor, mine.pk) == mine
        for find in (selectors.visible_task, selectors.member_task):
            with pytest.raises(NotFound):
                find(editor, theirs.pk)
            with pytest.raises(NotFound):
                find(editor, uuid.uuid4())

    def test_a_viewer_sees_the_tasks_of_published_versions_only(
        self, viewer, editor, knowledge_base
    ):
        tasks = {
            state: IngestionTaskFactory(
                succeeded=True,
                document__knowledge_base=knowledge_base,
                document__status=state,
            )
            for state in DocumentStatus.values
        }
        published = tasks[DocumentStatus.PUBLISHED]

        assert list(selectors.tasks_visible_to(viewer)) == [published]
        assert set(selectors.tasks_visible_to(editor)) == set(tasks.values())
        for state, task in tasks.items():
            if state != DocumentStatus.PUBLISHED:
                with pytest.raises(NotFound):
                    selectors.visible_task(viewer, task.pk)
            # Actions find it, then check the role (as `member_document`).
            assert selectors.member_task(viewer, task.pk) == task

    def test_anonymous_sees_none(self, knowledge_base):
        IngestionTaskFactory(document__knowledge_base=knowledge_base)

        assert not selectors.tasks_visible_to(AnonymousUser()).exists()

    def test_the_latest_task_of_a_document(self, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, failed=True)
        IngestionTaskFactory(document=document, failed=True)
        latest = IngestionTaskFactory(document=document, failed=True)

        assert selectors.latest_task(document.pk) == latest
        assert selectors.latest_task(uuid.uuid4()) is None


class TestIngestionStatus:
    def test_counts_ages_running_tasks_and_recent_failures(self):
        now = timezone.now()
        IngestionTaskFactory(available_at=now - timedelta(seconds=90))
        IngestionTaskFactory(available_at=now - timedelta(seconds=30))
        running = IngestionTaskFactory(
            running=True,
            worker_id="w-7",
            stage="parse",
            completed=1,
            total=3,
            started_at=now - timedelta(seconds=5),
            lease_expires_at=now + timedelta(seconds=42),
        )
        IngestionTaskFactory(failed=True, finished_at=now - timedelta(hours=1))
        IngestionTaskFactory(
            failed=True, error_code="object_read_error", finished_at=now
        )
        IngestionTaskFactory(failed=True, finished_at=now - timedelta(hours=25))
        OutboxEvent.objects.create(topic="t", payload={})
        OutboxEvent.objects.create(topic="t", payload={}, delivered_at=now)

        status = selectors.ingestion_status(now)

        assert status["tasks_by_status"] == {
            TaskStatus.QUEUED: 2,
            TaskStatus.RUNNING: 1,
            TaskStatus.RETRY_WAIT: 0,
            TaskStatus.SUCCEEDED: 0,
            TaskStatus.FAILED: 3,
            TaskStatus.CANCELLED: 0,
        }
        assert status["oldest_queued_age_seconds"] == 90.0
        assert status["running"] == [
            {
                "task_id": str(running.pk),
                "document_id": str(running.document_id),
                "worker_id": "w-7",
                "lane": "light",
                "attempt": 1,
                "stage": "parse",
                "completed": 1,
                "total": 3,
                "lease_expires_in_seconds": 42.0,
            }
        ]
        # Within the last 24 hours only.
        assert status["failures_last_24h_by_error_code"] == {
            "parse_error": 1,
            "object_read_error": 1,
        }
        assert status["outbox_undelivered"] == 1

    def test_an_empty_queue(self):
        status = selectors.ingestion_status()

        assert set(status["tasks_by_status"].values()) == {0}
        assert status["oldest_queued_age_seconds"] is None
        assert status["running"] == []
        assert status["failures_last_24h_by_error_code"] == {}
        assert status["outbox_undelivered"] == 0
