"""What a document version changes against its family's published version.

Callers pass a document they have already scoped (the admin's member queryset,
`visible_document`); the published version is looked up in the same knowledge base.
Each side is read up to `MAX_PASSAGES`, so the work is bounded whatever the size.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from django.core.cache import cache
from django.db.models import OuterRef, QuerySet, Subquery

from documents import selectors as document_selectors
from documents.models import Document, DocumentStatus
from retrieval.models import Chunk

from .passage_diff import (
    Passage,
    PassageChange,
    PassageDiff,
    StoredChunk,
    diff_passages,
    passages_from_chunks,
)

MAX_PASSAGES = 5000
# The page and the API list this many changes; the summary counts them all.
MAX_LISTED_CHANGES = 500
# A summary depends only on rows that do not change while their lock_version and
# the published version stay the same, so the key holds both.
_SUMMARY_CACHE_SECONDS = 24 * 3600


class Comparison(StrEnum):
    COMPARED = "compared"
    """Compared with the family's published version."""
    NO_PUBLISHED_VERSION = "no_published_version"
    """No version of the family is published: nothing to compare with."""
    IS_PUBLISHED = "is_published"
    """This is the published version."""
    NOT_INGESTED = "not_ingested"
    """This version has no chunks yet: nothing to compare."""


@dataclass(frozen=True)
class ChangeSummary:
    added: int
    removed: int
    changed: int
    moved: int
    unchanged: int
    passages: int
    published_passages: int
    truncated: bool

    @classmethod
    def of(cls, diff: PassageDiff, *, truncated: bool) -> ChangeSummary:
        return cls(
            added=diff.added,
            removed=diff.removed,
            changed=diff.changed,
            moved=diff.moved,
            unchanged=diff.unchanged,
            passages=diff.new_total,
            published_passages=diff.old_total,
            truncated=truncated,
        )

    @property
    def short(self) -> str:
        """For a table cell: "+3 −1 ~2" (and "↕1" for moves), or "no change"."""
        parts = [f"+{self.added}", f"−{self.removed}", f"~{self.changed}"]
        if self.moved:
            parts.append(f"↕{self.moved}")
        text = " ".join(parts) if self.has_changes else "no change"
        return f"{text} (first {MAX_PASSAGES:,})" if self.truncated else text

    @property
    def has_changes(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.moved)

    @property
    def sentence(self) -> str:
        counts = [
            f"{self.added} {'passage' if self.added == 1 else 'passages'} added",
            f"{self.removed} removed",
            f"{self.changed} changed",
        ]
        if self.moved:
            counts.append(f"{self.moved} moved")
        return (
            f"{', '.join(counts)} of {self.passages} "
            f"(the published version has {self.published_passages})."
        )


@dataclass(frozen=True)
class DocumentChanges:
    document: Document
    comparison: Comparison
    published: Document | None = None
    diff: PassageDiff | None = None
    summary: ChangeSummary | None = None

    @property
    def listed(self) -> list[PassageChange]:
        return self.diff.changes[:MAX_LISTED_CHANGES] if self.diff else []

    @property
    def unlisted(self) -> int:
        return max(0, len(self.diff.changes) - MAX_LISTED_CHANGES) if self.diff else 0


def with_published_version(documents: QuerySet[Document]) -> QuerySet[Document]:
    """Annotate `published_version_id`: the family's published version, if any."""
    published = Document.objects.published().filter(
        family_id=OuterRef("family_id"),
        knowledge_base_id=OuterRef("knowledge_base_id"),
    )
    return documents.annotate(published_version_id=Subquery(published.values("pk")[:1]))


def published_version_of(document: Document) -> Document | None:
    return (
        Document.objects.published()
        .filter(
            family_id=document.family_id, knowledge_base_id=document.knowledge_base_id
        )
        .first()
    )


def document_changes(document: Document) -> DocumentChanges:
    """The passage-level diff of an already scoped document against its published
    version."""
    if document.status == DocumentStatus.PUBLISHED:
        return DocumentChanges(document, Comparison.IS_PUBLISHED)
    published = published_version_of(document)
    if published is None:
        return DocumentChanges(document, Comparison.NO_PUBLISHED_VERSION)
    if not Chunk.objects.filter(document_id=document.pk).exists():
        return DocumentChanges(document, Comparison.NOT_INGESTED, published=published)
    diff, truncated = _diff(published.pk, document.pk)
    return DocumentChanges(
        document,
        Comparison.COMPARED,
        published=published,
        diff=diff,
        summary=ChangeSummary.of(diff, truncated=truncated),
    )


def document_changes_for(user, document_id: uuid.UUID) -> DocumentChanges:
    """`document_changes` of a document the caller may see (else `NotFound`)."""
    return document_changes(document_selectors.visible_document(user, document_id))


def change_summary(
    document: Document, *, published_id: uuid.UUID | None
) -> ChangeSummary | None:
    """The counts alone, remembered in the cache; None without a published version
    (or for the published version itself)."""
    if published_id is None or published_id == document.pk:
        return None
    key = f"curator:changes:{document.pk}:{document.lock_version}:{published_id}"
    summary = cache.get(key)
    if summary is None:
        diff, truncated = _diff(published_id, document.pk)
        summary = ChangeSummary.of(diff, truncated=truncated)
        cache.set(key, summary, _SUMMARY_CACHE_SECONDS)
    return summary


def change_summaries(
    documents: Sequence[Document],
) -> dict[uuid.UUID, ChangeSummary | None]:
    """`change_summary` of each document, finding published versions in one query."""
    published = {
        (family_id, knowledge_base_id): pk
        for family_id, knowledge_base_id, pk in Document.objects.published()
        .filter(family_id__in={document.family_id for document in documents})
        .values_list("family_id", "knowledge_base_id", "pk")
    }
    return {
        document.pk: change_summary(
            document,
            published_id=published.get(
                (document.family_id, document.knowledge_base_id)
            ),
        )
        for document in documents
    }


def _diff(published_id: uuid.UUID, document_id: uuid.UUID) -> tuple[PassageDiff, bool]:
    old, old_truncated = _passages(published_id)
    new, new_truncated = _passages(document_id)
    return diff_passages(old, new), old_truncated or new_truncated


def _passages(document_id: uuid.UUID) -> tuple[list[Passage], bool]:
    """The document's first `MAX_PASSAGES` passages, and whether there were more."""
    rows = list(
        Chunk.objects.filter(document_id=document_id)
        .order_by("ordinal")
        .values_list("text", "heading_path", "page", "char_start", "char_end")[
            : MAX_PASSAGES + 1
        ]
    )
    passages = passages_from_chunks(
        StoredChunk(text, tuple(heading or ()), page, start, end)
        for text, heading, page, start, end in rows[:MAX_PASSAGES]
    )
    truncated = len(rows) > MAX_PASSAGES or len(passages) > MAX_PASSAGES
    return passages[:MAX_PASSAGES], truncated
