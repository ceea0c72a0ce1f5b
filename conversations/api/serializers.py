from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from conversations.models import Conversation, ConversationTurn, HiddenReason


class ConversationSerializer(serializers.ModelSerializer):
    turn_count = serializers.IntegerField(
        read_only=True, help_text="Turns kept (the newest ones)."
    )
    hidden_turn_count = serializers.IntegerField(
        read_only=True,
        help_text="Of those, the turns hidden from you (see a turn's hidden_reason).",
    )

    class Meta:
        model = Conversation
        fields = [
            "id",
            "title",
            "created_at",
            "updated_at",
            "turn_count",
            "hidden_turn_count",
        ]
        read_only_fields = fields
        extra_kwargs = {"title": {"help_text": "The first question, clipped."}}


# Null on a hidden turn: only its place in the conversation is shown.
HIDDEN_FIELDS = ("question", "resolved_question", "answer", "refused")


class ConversationTurnSerializer(serializers.ModelSerializer):
    question = serializers.CharField(
        read_only=True, allow_null=True, help_text="As asked; null when hidden."
    )
    resolved_question = serializers.CharField(
        read_only=True, allow_null=True, help_text="As searched; null when hidden."
    )
    answer = serializers.CharField(
        read_only=True, allow_null=True, help_text="Null when hidden."
    )
    refused = serializers.BooleanField(
        read_only=True, allow_null=True, help_text="Null when hidden."
    )
    hidden = serializers.SerializerMethodField()
    hidden_reason = serializers.SerializerMethodField()

    class Meta:
        model = ConversationTurn
        fields = [
            "ordinal",
            "question",
            "resolved_question",
            "answer",
            "refused",
            "created_at",
            "hidden",
            "hidden_reason",
        ]
        read_only_fields = fields

    @extend_schema_field(
        serializers.BooleanField(
            help_text="The question and answer are not shown (see hidden_reason)."
        )
    )
    def get_hidden(self, turn: ConversationTurn) -> bool:
        return self.get_hidden_reason(turn) is not None

    @extend_schema_field(
        serializers.ChoiceField(
            choices=HiddenReason.choices,
            allow_null=True,
            help_text="sources_unreadable: the answer quotes a knowledge base you "
            "are no longer a member of; sources_unrecorded: stored before turns "
            "kept their knowledge bases. Null when shown.",
        )
    )
    def get_hidden_reason(self, turn: ConversationTurn) -> str | None:
        return getattr(turn, "hidden_reason", None)

    def to_representation(self, turn: ConversationTurn) -> dict:
        data = super().to_representation(turn)
        if data["hidden"]:
            data.update(dict.fromkeys(HIDDEN_FIELDS))
        return data


class ConversationDetailSerializer(ConversationSerializer):
    turns = ConversationTurnSerializer(
        many=True, read_only=True, help_text="Oldest first."
    )

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "turns"]
        read_only_fields = fields
