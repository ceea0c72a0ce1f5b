"""The search backend told of publishes, archives and deletions, after they commit.

A backend that keeps its own copy (another host, another engine) hears of each
change here; one that reads the database at query time (the snapshot backend)
ignores them. A backend that fails is logged and never undoes the change: the
publish stays committed, and the backend catches up by its own means.
"""

from __future__ import annotations

import logging
from functools import partial

from django.db import transaction
from django.db.models.signals import post_delete

from documents.models import Document, DocumentStatus, KnowledgeBase
from documents.signals import version_published, version_withdrawn

from . import get_search_backend

logger = logging.getLogger(__name__)


def _tell(what: str, knowledge_base_id: str, *args: object) -> None:
    try:
        getattr(get_search_backend(), what)(knowledge_base_id, *args)
    except Exception:
        logger.exception(
            "search backend not told: %s knowledge_base=%s %s",
            what,
            knowledge_base_id,
            " ".join(map(str, args)),
        )


def _published(sender, *, knowledge_base_id: str, document_id, **kwargs) -> None:
    _tell("published", knowledge_base_id, document_id)


def _withdrawn(sender, *, knowledge_base_id: str, document_id, **kwargs) -> None:
    _tell("withdrawn", knowledge_base_id, document_id)


def _document_deleted(sender, instance: Document, **kwargs) -> None:
    if instance.status == DocumentStatus.PUBLISHED:
        transaction.on_commit(
            partial(_tell, "withdrawn", instance.knowledge_base_id, instance.pk)
        )


def _knowledge_base_deleted(sender, instance: KnowledgeBase, **kwargs) -> None:
    transaction.on_commit(partial(_tell, "discard", instance.pk))


def republished_on_commit(documents: list[tuple[str, object]]) -> None:
    """The chunks of these published (knowledge base id, document id) were made
    again (`reindex_chunks`): publish them again once that commits."""

    def tell() -> None:
        for knowledge_base_id, document_id in documents:
            _tell("published", knowledge_base_id, document_id)

    transaction.on_commit(tell)


def connect() -> None:
    version_published.connect(_published, dispatch_uid="search-published")
    version_withdrawn.connect(_withdrawn, dispatch_uid="search-withdrawn")
    post_delete.connect(
        _document_deleted, sender=Document, dispatch_uid="search-document-deleted"
    )
    post_delete.connect(
        _knowledge_base_deleted,
        sender=KnowledgeBase,
        dispatch_uid="search-knowledge-base-deleted",
    )
