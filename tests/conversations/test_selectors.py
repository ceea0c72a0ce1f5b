"""`conversations/selectors.py`: a conversation is its owner's alone.

The same rule through the API, and conversations as chat keeps them, are tested in
`test_conversations.py`.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from conversations import selectors
from conversations.models import ConversationTurnSource, HiddenReason
from core.errors import NotFound
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


class TestHiddenTurns:
    """`turns_of`: hidden while a quoted knowledge base is not the owner's."""

    def quoting(self, conversation, ordinal, *knowledge_base_ids, **fields):
        turn = ConversationTurnFactory(
            conversation=conversation,
            ordinal=ordinal,
            question=f"q{ordinal}",
            resolved_question=f"q{ordinal} (resolved)",
            **fields,
        )
        for knowledge_base_id in knowledge_base_ids:
            ConversationTurnSource.objects.create(
                turn=turn, knowledge_base_id=knowledge_base_id
            )
        return turn

    def test_each_turn_says_whether_and_why_it_is_hidden(
        self, viewer, knowledge_base, other_knowledge_base
    ):
        conversation = ConversationFactory(owner=viewer)
        self.quoting(conversation, 1, "kb-company")
        self.quoting(conversation, 2, "kb-company", "kb-other")
        self.quoting(conversation, 3)  # a refusal quotes nothing
        self.quoting(conversation, 4, sources_recorded=False)
        self.quoting(conversation, 5, sources_recorded=False, refused=True)
        self.quoting(conversation, 6, "kb-deleted")

        found = selectors.conversation_with_turns(viewer, conversation.pk)

        assert [(t.ordinal, t.hidden_reason) for t in found.turns.all()] == [
            (1, None),
            (2, HiddenReason.SOURCES_UNREADABLE),
            (3, None),
            (4, HiddenReason.SOURCES_UNRECORDED),
            (5, None),
            (6, HiddenReason.SOURCES_UNREADABLE),
        ]
        (listed,) = selectors.conversations_for(viewer)
        assert (listed.turn_count, listed.hidden_turn_count) == (6, 3)

    def test_hidden_turns_are_no_follow_up_context(self, viewer, knowledge_base):
        conversation = ConversationFactory(owner=viewer)
        self.quoting(conversation, 1, "kb-company")
        self.quoting(conversation, 2, "kb-other")
        self.quoting(conversation, 3, "kb-company")
        self.quoting(conversation, 4, "kb-other")

        assert selectors.recent_questions(conversation, limit=2) == [
            "q1 (resolved)",
            "q3 (resolved)",
        ]


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
