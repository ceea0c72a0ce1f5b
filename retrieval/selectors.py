"""Reads that carry rules: a conversation is its owner's alone; feedback on
answers is read by the reviewers of every knowledge base it belongs to.

Another user's conversation is `NotFound`, exactly like one that does not exist, so
an id discloses nothing.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db.models import Count, Prefetch, QuerySet

from core.errors import NotFound
from documents.models import KnowledgeBase, Role
from documents.selectors import knowledge_base_ids_for

from .models import AnswerFeedback, Conversation, ConversationTurn

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def conversations_for(user: User | AnonymousUser) -> QuerySet[Conversation]:
    """The caller's conversations, most recently used first, with `turn_count`."""
    return (
        Conversation.objects.owned_by(user)
        .annotate(turn_count=Count("turns"))
        .order_by("-updated_at", "-created_at", "id")
    )


def conversation_for(
    user: User | AnonymousUser, conversation_id: uuid.UUID
) -> Conversation:
    conversation = conversations_for(user).filter(pk=conversation_id).first()
    if conversation is None:
        raise NotFound("Conversation not found.")
    return conversation


def conversation_with_turns(
    user: User | AnonymousUser, conversation_id: uuid.UUID
) -> Conversation:
    """The caller's conversation with `turns` fetched, oldest first."""
    conversation = (
        conversations_for(user)
        .prefetch_related(
            Prefetch("turns", queryset=ConversationTurn.objects.order_by("ordinal"))
        )
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        raise NotFound("Conversation not found.")
    return conversation


def recent_questions(conversation: Conversation, *, limit: int) -> list[str]:
    """The resolved questions of the newest `limit` turns, oldest first."""
    newest = conversation.turns.order_by("-ordinal").values_list(
        "resolved_question", flat=True
    )[:limit]
    return list(reversed(newest))


def answers_to_check_for(user: User | AnonymousUser) -> QuerySet[AnswerFeedback]:
    """Answers marked not helpful, newest first, that the caller reviews.

    Only feedback whose knowledge bases are all ones the caller reviews: an answer
    that also quotes another knowledge base would show its text to a non-member.
    Everyone else gets none.
    """
    mine = knowledge_base_ids_for(user, minimum_role=Role.REVIEWER)
    if not mine:
        return AnswerFeedback.objects.none()
    return (
        AnswerFeedback.objects.not_helpful()
        .in_knowledge_bases(mine)
        .exclude(knowledge_bases__in=KnowledgeBase.objects.exclude(pk__in=mine))
        .select_related("user")
        .prefetch_related("knowledge_bases")
        .order_by("-created_at", "id")
    )
