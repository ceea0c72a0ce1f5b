from __future__ import annotations

from rest_framework import serializers

from retrieval.models import Conversation, ConversationTurn


class ConversationSerializer(serializers.ModelSerializer):
    turn_count = serializers.IntegerField(
        read_only=True, help_text="Turns kept (the newest ones)."
    )

    class Meta:
        model = Conversation
        fields = ["id", "title", "created_at", "updated_at", "turn_count"]
        read_only_fields = fields
        extra_kwargs = {"title": {"help_text": "The first question, clipped."}}


class ConversationTurnSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConversationTurn
        fields = [
            "ordinal",
            "question",
            "resolved_question",
            "answer",
            "refused",
            "created_at",
        ]
        read_only_fields = fields


class ConversationDetailSerializer(ConversationSerializer):
    turns = ConversationTurnSerializer(
        many=True, read_only=True, help_text="Oldest first."
    )

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "turns"]
        read_only_fields = fields
