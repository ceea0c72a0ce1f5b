"""The conversations' models moved from retrieval with their tables: migrating
keeps every row, the permissions granted on them and the admin's history, and
migrating back gives retrieval its models again."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from conversations.models import AnswerFeedback, Conversation, ConversationTurnSource
from tests.factories import KnowledgeBaseFactory

# Before the move: retrieval 0007 held the models, conversations had none.
BEFORE = [("conversations", None)]
OLD_STATE = ("retrieval", "0007_conversation_turn_sources")
MOVED = ("conversation", "conversationturn", "conversationturnsource", "answerfeedback")


def migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    ContentType.objects.clear_cache()
    return executor


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_rows_grants_and_history():
    kb = KnowledgeBaseFactory()
    try:
        old = migrate(BEFORE).loader.project_state(OLD_STATE).apps
        labels = ContentType.objects.filter(model__in=MOVED)
        assert set(labels.values_list("app_label", flat=True)) == {"retrieval"}
        owner = old.get_model("auth", "User").objects.create(username="owner")
        conversation = old.get_model("retrieval", "Conversation").objects.create(
            owner=owner, title="leave?"
        )
        turn = old.get_model("retrieval", "ConversationTurn").objects.create(
            conversation=conversation,
            ordinal=1,
            question="q",
            resolved_question="q",
            answer="a",
            refused=False,
        )
        old.get_model("retrieval", "ConversationTurnSource").objects.create(
            turn=turn, knowledge_base_id=kb.pk
        )
        feedback = old.get_model("retrieval", "AnswerFeedback").objects.create(
            user=owner, question="q", answer="a", helpful=False
        )
        feedback.knowledge_bases.set([kb.pk])
        permission = old.get_model("auth", "Permission").objects.get(
            content_type__app_label="retrieval", codename="view_conversation"
        )
        owner.user_permissions.add(permission)
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert Conversation.objects.get().title == "leave?"
    assert ConversationTurnSource.objects.get().turn.conversation_id == conversation.pk
    assert list(AnswerFeedback.objects.get().knowledge_bases.all()) == [kb]
    assert User.objects.get(pk=owner.pk).has_perm("conversations.view_conversation")
    assert set(labels.values_list("app_label", flat=True)) == {"conversations"}
    moved_type = ContentType.objects.get_for_model(Conversation)
    assert moved_type.pk == permission.content_type_id  # the same row, relabelled
