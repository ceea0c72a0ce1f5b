"""The conversations chat keeps for follow-up questions, and what people said of
answers.

These tables were created by the retrieval app and keep their names
(`Meta.db_table`): the move to this app changed no row (migrations 0001 here,
retrieval 0008)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from documents.models import KnowledgeBase


class ConversationQuerySet(models.QuerySet):
    def owned_by(self, user) -> ConversationQuerySet:
        return self.filter(owner=user) if user.is_authenticated else self.none()

    def updated_before(self, cutoff) -> ConversationQuerySet:
        return self.filter(updated_at__lt=cutoff)


class Conversation(models.Model):
    """A chat's history, so that a follow-up can be resolved against it.

    Only questions and answers are kept: which knowledge bases a turn may read is
    decided again on every turn, never remembered.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    # The first question, clipped.
    title = models.CharField(max_length=200, blank=True)
    # The newest turn's ordinal; the next turn takes it plus one (see services).
    last_ordinal = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        db_table = "retrieval_conversation"
        ordering = ["-updated_at", "-created_at"]
        indexes = [
            # The owner's list, most recently used first.
            models.Index(fields=["owner", "-updated_at"]),
            # Pruning by age.
            models.Index(fields=["updated_at"]),
        ]

    def __str__(self) -> str:
        # Not the title: the admin shows this, and questions stay out of it.
        return f"conversation {self.id}"


class HiddenReason(models.TextChoices):
    """Why a turn is shown to its owner without its question and answer
    (`selectors.turns_of`)."""

    SOURCES_UNREADABLE = "sources_unreadable"
    """Its answer quotes a knowledge base the owner is no longer a member of."""
    SOURCES_UNRECORDED = "sources_unrecorded"
    """An answer stored before turns kept their knowledge bases: whom it may be
    shown to cannot be told (a refusal, which quotes nothing, stays shown)."""


class ConversationTurn(models.Model):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="turns"
    )
    ordinal = models.PositiveIntegerField()
    question = models.TextField(help_text="As asked.")
    resolved_question = models.TextField(help_text="As searched.")
    answer = models.TextField()
    refused = models.BooleanField()
    # False on turns stored before their sources were: see HiddenReason.
    sources_recorded = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "retrieval_conversationturn"
        ordering = ["conversation_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "ordinal"],
                name="one_turn_per_conversation_ordinal",
            )
        ]

    def __str__(self) -> str:
        return f"turn {self.ordinal} of {self.conversation_id}"


class ConversationTurnSource(models.Model):
    """A knowledge base a turn's answer quotes: the turn is shown to its owner
    only while they are a member of every one."""

    turn = models.ForeignKey(
        ConversationTurn, on_delete=models.CASCADE, related_name="sources"
    )
    # A plain id, not a foreign key: should the knowledge base go, its turns stay
    # hidden rather than lose the row that hides them.
    knowledge_base_id = models.CharField(max_length=64)

    class Meta:
        db_table = "retrieval_conversationturnsource"
        constraints = [
            models.UniqueConstraint(
                fields=["turn", "knowledge_base_id"],
                name="one_source_per_turn_and_knowledge_base",
            )
        ]

    def __str__(self) -> str:
        return f"{self.knowledge_base_id} quoted by turn {self.turn_id}"


class AnswerFeedbackQuerySet(models.QuerySet):
    def not_helpful(self) -> AnswerFeedbackQuerySet:
        return self.filter(helpful=False)

    def in_knowledge_bases(self, knowledge_base_ids) -> AnswerFeedbackQuerySet:
        return self.filter(knowledge_bases__in=knowledge_base_ids).distinct()


class AnswerFeedback(models.Model):
    """Helpful or not, said by the person who asked, with what the answer cited.

    It belongs to the knowledge bases of its cited documents (of the ones searched
    for a refusal, which cites none): their reviewers read it, nobody else.
    """

    COMMENT_CHARS = 2000

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="answer_feedback",
    )
    # Plain id: conversations are pruned and deleted by their owners on their own.
    conversation_id = models.UUIDField(null=True, blank=True)
    question = models.TextField()
    answer = models.TextField()
    refused = models.BooleanField(default=False)
    # [{id, document_id, document_version, filename, knowledge_base_id, page,
    #   heading_path, excerpt}], as the answer cited them.
    sources = models.JSONField(default=list, blank=True)
    knowledge_bases = models.ManyToManyField(
        KnowledgeBase, related_name="answer_feedback", blank=True
    )
    helpful = models.BooleanField()
    comment = models.CharField(max_length=COMMENT_CHARS, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AnswerFeedbackQuerySet.as_manager()

    class Meta:
        db_table = "retrieval_answerfeedback"
        ordering = ["-created_at", "id"]

    def __str__(self) -> str:
        return f"feedback {self.id} ({'helpful' if self.helpful else 'not helpful'})"
