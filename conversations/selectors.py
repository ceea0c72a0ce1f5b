"""Reads that carry rules: a conversation is its owner's alone, and shows them only
the turns whose knowledge bases they still read; feedback on answers is read by the
reviewers of every knowledge base it belongs to.

Another user's conversation is `NotFound`, exactly like one that does not exist, so
an id discloses nothing.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from core.errors import NotFound
from documents.models import KnowledgeBase, Role
from documents.selectors import knowledge_base_ids_for, knowledge_base_ids_query

from .models import (
    AnswerFeedback,
    Conversation,
    ConversationTurn,
    ConversationTurnSource,
    HiddenReason,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def turns_of(owner: User | AnonymousUser) -> QuerySet[ConversationTurn]:
    """Turns as their owner sees them, each with `hidden_reason` (None: shown).

    A turn whose answer quotes a knowledge base the owner is no longer a member
    of is hidden, as search and chat leave that knowledge base out of new turns.
    """
    unreadable = ConversationTurnSource.objects.filter(turn=OuterRef("pk")).exclude(
        knowledge_base_id__in=knowledge_base_ids_query(owner)
    )
    return ConversationTurn.objects.annotate(
        hidden_reason=Case(
            When(Exists(unreadable), then=Value(HiddenReason.SOURCES_UNREADABLE)),
            When(
                Q(sources_recorded=False, refused=False),
                then=Value(HiddenReason.SOURCES_UNRECORDED),
            ),
            default=None,
            output_field=CharField(),
        )
    )


def conversations_for(user: User | AnonymousUser) -> QuerySet[Conversation]:
    """The caller's conversations, most recently used first, with `turn_count`
    and, of those turns, `hidden_turn_count`."""
    hidden = (
        turns_of(user)
        .filter(conversation=OuterRef("pk"), hidden_reason__isnull=False)
        .order_by()
        .values("conversation")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        Conversation.objects.owned_by(user)
        .annotate(
            turn_count=Count("turns"),
            hidden_turn_count=Coalesce(
                Subquery(hidden, output_field=IntegerField()), 0
            ),
        )
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
    """The caller's conversation with `turns` fetched, oldest first, each with
    `hidden_reason`."""
    conversation = (
        conversations_for(user)
        .prefetch_related(
            Prefetch("turns", queryset=turns_of(user).order_by("ordinal"))
        )
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        raise NotFound("Conversation not found.")
    return conversation


def recent_questions(conversation: Conversation, *, limit: int) -> list[str]:
    """The resolved questions of the newest `limit` turns its owner is shown,
    oldest first: a hidden turn is no context for a follow-up either."""
    newest = (
        turns_of(conversation.owner)
        .filter(conversation=conversation, hidden_reason__isnull=True)
        .order_by("-ordinal")
        .values_list("resolved_question", flat=True)[:limit]
    )
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
