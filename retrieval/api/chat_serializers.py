from __future__ import annotations

from rest_framework import serializers

from retrieval.answers.types import RefusalReason


class UUIDStringField(serializers.UUIDField):
    """A UUID as JSON carries one, a string (DRF's field also takes an integer)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class ChatRequestSerializer(serializers.Serializer):
    question = serializers.CharField(
        min_length=1, max_length=2000, trim_whitespace=True
    )
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=50
    )
    conversation_id = UUIDStringField(
        required=False,
        allow_null=True,
        help_text=(
            "Continue this conversation (the conversation_id of an earlier answer): "
            "a follow-up question is resolved against its previous turns. Omit it "
            "to start a new conversation."
        ),
    )


class ChatClaimSerializer(serializers.Serializer):
    text = serializers.CharField()
    source_ids = serializers.ListField(child=serializers.CharField())


class ChatSourceSerializer(serializers.Serializer):
    id = serializers.CharField(help_text='"S1", "S2", ... as cited by the claims.')
    document_id = serializers.UUIDField()
    document_version = serializers.IntegerField()
    knowledge_base_id = serializers.CharField()
    filename = serializers.CharField()
    heading_path = serializers.ListField(child=serializers.CharField())
    page = serializers.IntegerField(allow_null=True)
    excerpt = serializers.CharField()


class ChatResponseSerializer(serializers.Serializer):
    answer = serializers.CharField(
        help_text="The claims with [S1] markers, or why the answer was refused."
    )
    refused = serializers.BooleanField()
    refusal_reason = serializers.ChoiceField(
        choices=[reason.value for reason in RefusalReason], allow_null=True
    )
    claims = ChatClaimSerializer(many=True)
    sources = ChatSourceSerializer(many=True, help_text="Only the cited sources.")
    partial = serializers.BooleanField(
        help_text="Some parts of a multi-part question have no supported answer."
    )
    missing_information = serializers.ListField(
        child=serializers.CharField(), help_text="The parts left unanswered."
    )
    provider = serializers.CharField()
    profile = serializers.CharField()
    conversation_id = serializers.UUIDField(
        help_text="The conversation this turn was stored in; send it to follow up."
    )
    resolved_question = serializers.CharField(
        help_text=(
            "The question as searched: a follow-up made to stand alone against the "
            "conversation's previous turns, otherwise the question as asked."
        )
    )
