"""What the person who asked says of an answer: helpful or not, and why.

The feedback belongs to the knowledge bases of the documents the answer cited,
read again from the database (the caller names documents, never knowledge
bases); a refusal cites none and belongs to the knowledge bases it searched.
Its reviewers see it in their "answers to check" (`selectors.answers_to_check_for`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import transaction

from core.errors import NotFound
from documents.selectors import documents_visible_to
from retrieval import search

from . import selectors
from .models import AnswerFeedback

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def answer_feedback_create(
    *,
    user: User,
    question: str,
    answer: str,
    helpful: bool,
    comment: str = "",
    refused: bool = False,
    sources: Sequence[dict[str, Any]] = (),
    conversation_id: uuid.UUID | None = None,
    knowledge_base_ids: list[str] | None = None,
) -> AnswerFeedback:
    """Store the caller's feedback on an answer they were given.

    `sources` are the answer's cited sources (`document_id`, `id`, `page`,
    `heading_path`, `excerpt`); a document the caller cannot read, or another
    user's conversation, is `NotFound`, as on every other endpoint.
    """
    if conversation_id is not None:
        selectors.conversation_for(user, conversation_id)
    wanted = {str(source["document_id"]) for source in sources}
    documents = {
        str(document.pk): document
        for document in documents_visible_to(user).filter(pk__in=wanted)
    }
    if wanted - set(documents):
        raise NotFound("Document not found.")
    stored = [
        {
            "id": source.get("id", ""),
            "document_id": str(document.pk),
            "document_version": document.version,
            "filename": document.filename,
            "knowledge_base_id": document.knowledge_base_id,
            "page": source.get("page"),
            "heading_path": list(source.get("heading_path") or []),
            "excerpt": source.get("excerpt", ""),
        }
        for source in sources
        for document in [documents[str(source["document_id"])]]
    ]
    knowledge_bases = sorted({source["knowledge_base_id"] for source in stored})
    if not knowledge_bases:
        knowledge_bases = search.searchable_knowledge_bases(user, knowledge_base_ids)
    with transaction.atomic():
        feedback = AnswerFeedback.objects.create(
            user=user,
            conversation_id=conversation_id,
            question=question,
            answer=answer,
            refused=refused,
            sources=stored,
            helpful=helpful,
            comment=comment[: AnswerFeedback.COMMENT_CHARS],
        )
        feedback.knowledge_bases.set(knowledge_bases)
    return feedback
