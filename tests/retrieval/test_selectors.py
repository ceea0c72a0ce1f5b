"""`retrieval/selectors.py`: a conversation is its owner's alone.

The same rule through the API, and conversations as chat keeps them, are tested in
`test_conversations.py`.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from core.errors import NotFound
from retrieval import selectors
from tests.factories import ConversationFactory, ConversationTurnFactory

pytestmark = pytest.mark.django_db


def turns(conversation, *questions: str, first: int = 1) -> None:
    for ordinal, question in enumerate(questions, start=first):
        ConversationTurnFactory(
            conversation=conversation,
            ordinal=ordinal,
            question=question,
            resolved_question=f"{question} (resolved)",
        )


class TestConversations:
    def test_the_owners_most_recently_used_first_with_their_turn_counts(
        self, viewer, editor
    ):
        now = timezone.now()
        older = ConversationFactory(owner=viewer, updated_at=now - timedelta(hours=2))
        newer = ConversationFactory(owner=viewer, updated_at=now - timedelta(hours=1))
        ConversationFactory(owner=editor, updated_at=now)
        turns(older, "How many days of leave?", "And for part-time staff?")

        listed = list(selectors.conversations_for(viewer))

        assert listed == [newer, older]
        assert [c.turn_count for c in listed] == [0, 2]

    def test_anonymous_has_none(self, viewer):
        ConversationFactory(owner=viewer)

        assert not selectors.conversations_for(AnonymousUser()).exists()

    def test_another_users_conversation_is_not_found_like_a_missing_one(
        self, viewer, editor
    ):
        theirs = ConversationFactory(owner=editor)

        for find in (selectors.conversation_for, selectors.conversation_with_turns):
            assert find(editor, theirs.pk) == theirs
            with pytest.raises(NotFound, match="Conversation not found"):
                find(viewer, theirs.pk)
            with pytest.raises(NotFound, match="Conversation not found"):
                find(viewer, uuid.uuid4())

    def test_turns_come_oldest_first(self, viewer, django_assert_num_queries):
        conversation = ConversationFactory(owner=viewer)
        turns(conversation, "third", first=3)
        turns(conversation, "first", "second")

        with django_assert_num_queries(2):  # the conversation, then its turns
            found = selectors.conversation_with_turns(viewer, conversation.pk)
            questions = [turn.question for turn in found.turns.all()]

        assert questions == ["first", "second", "third"]


class TestRecentQuestions:
    def test_the_newest_resolved_questions_oldest_first(self, viewer):
        conversation = ConversationFactory(owner=viewer)
        turns(conversation, "one", "two", "three", "four")

        assert selectors.recent_questions(conversation, limit=2) == [
            "three (resolved)",
            "four (resolved)",
        ]
        assert selectors.recent_questions(conversation, limit=10) == [
            f"{question} (resolved)" for question in ("one", "two", "three", "four")
        ]

    def test_a_new_conversation_has_none(self, viewer):
        conversation = ConversationFactory(owner=viewer)

        assert selectors.recent_questions(conversation, limit=3) == []
