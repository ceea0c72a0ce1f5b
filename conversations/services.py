"""Conversations: chat answers that remember their questions for follow-ups.

`conversation_chat()` is `conversation_prepare()` (the owner rule and the follow-up
resolved against the previous turns, all before a stream may start) followed by
`conversation_answer()` (`chat_answer` on the resolved question, then the turn
stored). A turn is stored only once its answer exists: a provider that is down
(`ProviderUnavailable`, 503) or a knowledge base the caller cannot read (404) leaves
the conversation as it was. A new conversation's id is chosen when it is prepared,
so a stream can announce it, and the row is written with its first turn.

Only questions and answers are stored, with the knowledge bases each answer
quotes: a turn is shown to its owner, and read as a follow-up's context, only
while they are a member of all of them (`selectors.turns_of`). Which knowledge
bases a turn reads is decided by `chat_answer` on every turn from the caller's
memberships at that moment and the turn's own `knowledge_base_ids`, never from an
earlier turn.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from answers import chat
from answers.followups import resolve_follow_up
from answers.types import Answer, ChatProvider
from core.errors import NotFound, ValidationFailed

from . import selectors
from .models import Conversation, ConversationTurn, ConversationTurnSource

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The resolver reads the newest question; older ones only for an item it lacks.
FOLLOW_UP_CONTEXT_TURNS = 5
TITLE_CHARS = 200


@dataclass(frozen=True)
class PreparedTurn:
    conversation_id: uuid.UUID
    is_new: bool
    question: str  # as asked
    resolved_question: str  # as it will be searched


@dataclass(frozen=True)
class ConversationAnswer:
    answer: Answer
    conversation_id: uuid.UUID
    resolved_question: str


def conversation_prepare(
    *, user: User, question: str, conversation_id: uuid.UUID | None = None
) -> PreparedTurn:
    """The next turn of the caller's conversation (a new one without an id).

    `NotFound` for an unknown id and for another user's conversation alike.
    """
    question = question.strip()
    if not question:
        raise ValidationFailed("question: This field may not be blank.")
    if conversation_id is None:
        return PreparedTurn(uuid.uuid4(), True, question, question)
    conversation = selectors.conversation_for(user, conversation_id)
    previous = selectors.recent_questions(conversation, limit=FOLLOW_UP_CONTEXT_TURNS)
    return PreparedTurn(
        conversation.pk, False, question, resolve_follow_up(question, previous)
    )


def conversation_answer(
    *,
    user: User,
    turn: PreparedTurn,
    knowledge_base_ids: list[str] | None = None,
    provider: ChatProvider | None = None,
) -> ConversationAnswer:
    """Answer a prepared turn and store it; nothing is stored if answering fails."""
    answer = chat.chat_answer(
        user=user,
        question=turn.resolved_question,
        knowledge_base_ids=knowledge_base_ids,
        provider=provider,
    )
    _store_turn(user=user, turn=turn, answer=answer)
    return ConversationAnswer(answer, turn.conversation_id, turn.resolved_question)


def conversation_chat(
    *,
    user: User,
    question: str,
    conversation_id: uuid.UUID | None = None,
    knowledge_base_ids: list[str] | None = None,
    provider: ChatProvider | None = None,
) -> ConversationAnswer:
    turn = conversation_prepare(
        user=user, question=question, conversation_id=conversation_id
    )
    return conversation_answer(
        user=user,
        turn=turn,
        knowledge_base_ids=knowledge_base_ids,
        provider=provider,
    )


def _store_turn(*, user: User, turn: PreparedTurn, answer: Answer) -> int:
    """Write the turn and drop what exceeds the history bound, in one transaction.

    The ordinal comes from the conversation's counter, moved by one conditional
    update: concurrent turns of one conversation queue on that row and each gets
    its own number. An update that matches nothing means the conversation was
    deleted meanwhile.
    """
    now = timezone.now()
    with transaction.atomic():
        if turn.is_new:
            Conversation.objects.create(
                id=turn.conversation_id,
                owner=user,
                title=_clip(turn.question, TITLE_CHARS),
                last_ordinal=1,
                updated_at=now,
            )
            ordinal = 1
        else:
            mine = Conversation.objects.owned_by(user).filter(pk=turn.conversation_id)
            if not mine.update(last_ordinal=F("last_ordinal") + 1, updated_at=now):
                raise NotFound("Conversation not found.")
            ordinal = mine.values_list("last_ordinal", flat=True).get()
        stored = ConversationTurn.objects.create(
            conversation_id=turn.conversation_id,
            ordinal=ordinal,
            question=turn.question,
            resolved_question=turn.resolved_question,
            answer=answer.answer,
            refused=answer.refused,
        )
        ConversationTurnSource.objects.bulk_create(
            ConversationTurnSource(turn=stored, knowledge_base_id=knowledge_base_id)
            for knowledge_base_id in sorted(
                {source.knowledge_base_id for source in answer.sources}
            )
        )
        # The turn just stored always stays, whatever the setting says.
        keep = max(1, settings.CHAT_CONVERSATION_MAX_TURNS)
        ConversationTurn.objects.filter(
            conversation_id=turn.conversation_id, ordinal__lte=ordinal - keep
        ).delete()
    return ordinal


def conversation_delete(*, user: User, conversation_id: uuid.UUID) -> None:
    """Delete the caller's conversation with its turns; `NotFound` otherwise."""
    deleted, _ = Conversation.objects.owned_by(user).filter(pk=conversation_id).delete()
    if not deleted:
        raise NotFound("Conversation not found.")


def conversation_prune(*, older_than: timedelta, batch: int = 1000) -> int:
    """Delete conversations last used more than `older_than` ago; their count."""
    old = Conversation.objects.updated_before(timezone.now() - older_than)
    pruned = 0
    while ids := list(old.values_list("pk", flat=True)[:batch]):
        _, per_model = Conversation.objects.filter(pk__in=ids).delete()
        pruned += per_model.get(Conversation._meta.label, 0)
    return pruned


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
