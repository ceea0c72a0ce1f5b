"""Tasks for the claim and worker tests: documents to submit, a task row read
back, a lease run out, the chunk rows of a run that died."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from documents.models import Document
from ingestion.models import IngestionTask
from tests.factories import DocumentFactory

TEXT = b"# Leave\n\nEvery employee receives 25 days of annual leave.\n"

LONG_MARKDOWN = (
    "# Handbook\n\n## Leave\n\n"
    + "\n\n".join(
        f"Paragraph {n} explains rule number {n} of the annual leave policy in "
        "plain words so that every employee understands it."
        for n in range(60)
    )
    + "\n\n## 报销\n\n"
    + "出差期间每天发放餐饮补助一百元，按实际出差天数计算。" * 40
).encode()


def document(knowledge_base, **kwargs):
    return DocumentFactory(knowledge_base=knowledge_base, content=TEXT, **kwargs)


def markdown_document(knowledge_base, content=LONG_MARKDOWN, **kwargs):
    return DocumentFactory(knowledge_base=knowledge_base, content=content, **kwargs)


def expire_lease(task) -> None:
    IngestionTask.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )


def fresh(task) -> IngestionTask:
    return IngestionTask.objects.get(pk=task.pk)


def document_status(task) -> str:
    return Document.objects.values_list("status", flat=True).get(pk=task.document_id)


def chunk_rows(claim, text: str):
    from ingestion.blocks import Block
    from ingestion.chunking import chunk_blocks
    from retrieval.embeddings import get_embedder
    from retrieval.services import chunk_rows

    chunks = chunk_blocks([Block(text=text)])
    return chunk_rows(
        document=Document.objects.get(pk=claim.document_id),
        chunks=chunks,
        vectors=get_embedder().embed([c.text for c in chunks]),
        embedding_model=get_embedder().name,
        ingestion_task_id=claim.task_id,
    )


def leave_chunks(claim, text: str) -> None:
    """Chunk rows of a run as if it had written them and died (a state that older
    versions, which wrote chunks before the success, could leave behind)."""
    from retrieval.services import chunks_replace

    chunks_replace(document_id=claim.document_id, rows=chunk_rows(claim, text))
