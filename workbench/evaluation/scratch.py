"""A throw-away knowledge base filled through the path users' documents take."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from documents.models import Document, DocumentStatus, KnowledgeBase, Membership, Role
from documents.services import document_publish, document_upload
from ingestion.models import IngestionTask, OutboxEvent, TaskStatus
from ingestion.services import document_submit
from ingestion.worker import Worker
from retrieval.models import Chunk
from retrieval.search_backends import get_search_backend

from .datasets import EvalPassage


class EvaluationError(RuntimeError):
    """The evaluation could not run (a passage failed to ingest, or the baseline's
    library is not installed)."""


class ScratchKnowledgeBase:
    """Knowledge base `eval-<8 hex>` with an editor who uploads and submits, a
    worker run on each task, and a reviewer who publishes (nobody publishes their
    own upload) and asks; `clean_up()` deletes every trace of it."""

    def __init__(
        self, name: str, *, write: Callable[[str], None] = lambda line: None
    ) -> None:
        self.id = f"eval-{uuid.uuid4().hex[:8]}"
        self.name = name
        self.write = write
        self.user: AbstractBaseUser | None = None
        self.editor: AbstractBaseUser | None = None
        self.documents: dict[str, uuid.UUID] = {}  # passage key -> document id

    def ingest(self, passages: Sequence[EvalPassage]) -> None:
        KnowledgeBase.objects.create(id=self.id, name=f"Evaluation {self.name}")
        users = get_user_model().objects
        self.user = users.create_user(username=self.id)
        self.editor = users.create_user(username=f"{self.id}-editor")
        Membership.objects.create(
            user=self.user, knowledge_base_id=self.id, role=Role.REVIEWER
        )
        Membership.objects.create(
            user=self.editor, knowledge_base_id=self.id, role=Role.EDITOR
        )
        self.write(f"uploading {len(passages)} passages to {self.id}")
        for passage in passages:
            document = document_upload(
                user=self.editor,
                knowledge_base_id=self.id,
                uploaded_file=ContentFile(
                    passage.data or passage.content.encode("utf-8"),
                    name=passage.filename,
                ),
            )
            self.documents[passage.key] = document.pk
        tasks = [
            document_submit(user=self.editor, document_id=document_id).pk
            for document_id in self.documents.values()
        ]
        # One task at a time by id: a worker draining the queue would also run
        # other knowledge bases' tasks waiting in this database.
        worker = Worker(worker_id=f"evaluate-{self.id}", write=lambda line: None)
        for done, task_id in enumerate(tasks, start=1):
            # A long task gives up its turn (INGESTION_TURN_SECONDS) and is
            # queued again: run it until a run ends without a yield.
            yielded = -1
            while worker.stats.yielded != yielded:
                yielded = worker.stats.yielded
                worker.run(task_id)
            if done % 200 == 0:
                self.write(f"ingested {done}/{len(tasks)}")
        failed = IngestionTask.objects.filter(pk__in=tasks).exclude(
            status=TaskStatus.SUCCEEDED
        )
        if failed.exists():
            codes = sorted(set(failed.values_list("error_code", flat=True)))
            raise EvaluationError(
                f"{failed.count()} passages failed to ingest: {', '.join(codes)}."
            )
        for document_id, lock_version in Document.objects.filter(
            pk__in=self.documents.values(), status=DocumentStatus.REVIEW_PENDING
        ).values_list("pk", "lock_version"):
            document_publish(
                user=self.user,
                document_id=document_id,
                expected_lock_version=lock_version,
            )

    def chunk_count(self) -> int:
        return Chunk.objects.filter(knowledge_base_id=self.id).count()

    def clean_up(self) -> None:
        documents = Document.objects.filter(knowledge_base_id=self.id)
        keys = list(documents.values_list("storage_key", flat=True))
        document_ids = [str(pk) for pk in documents.values_list("pk", flat=True)]
        with transaction.atomic():
            Chunk.objects.filter(knowledge_base_id=self.id).delete()
            IngestionTask.objects.filter(document_id__in=document_ids).delete()
            OutboxEvent.objects.filter(payload__document_id__in=document_ids).delete()
            documents.delete()
            KnowledgeBase.objects.filter(pk=self.id).delete()
            for user in (self.user, self.editor):
                if user is not None:
                    user.delete()
        for key in keys:
            default_storage.delete(key)
        get_search_backend().discard(self.id)
