from __future__ import annotations

from rest_framework import serializers

from answers.types import Confidence, Operation, RefusalReason


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


class ChatOperandSerializer(serializers.Serializer):
    value = serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        coerce_to_string=True,
        help_text='The exact number, as a string: "-3990".',
    )
    source_id = serializers.CharField(help_text="The source the number is read from.")
    label = serializers.CharField(
        allow_blank=True, help_text='What the number is: "Net revenue 2019".'
    )
    text = serializers.CharField(
        allow_blank=True, help_text="The number as the source writes it."
    )


class ChatCalculationSerializer(serializers.Serializer):
    operation = serializers.ChoiceField(
        choices=[operation.value for operation in Operation],
        help_text="change: last - first; percentage_change: (last - first) / first "
        "x 100; difference: first - second; ratio: first / second; percentage: "
        "first / second x 100; sum; average; count: how many operands.",
    )
    operands = ChatOperandSerializer(many=True)
    result = serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        coerce_to_string=True,
        help_text="Exact, as a string, rounded half away from zero to `decimals`.",
    )
    decimals = serializers.IntegerField(min_value=0)


class ChatClaimSerializer(serializers.Serializer):
    text = serializers.CharField()
    source_ids = serializers.ListField(child=serializers.CharField())
    calculation = ChatCalculationSerializer(
        allow_null=True,
        help_text="How a computed number in the claim was computed; recomputed "
        "from the cited sources before the claim was kept. Null for other claims.",
    )


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
    confidence = serializers.ChoiceField(
        choices=[level.value for level in Confidence],
        allow_null=True,
        help_text=(
            "How sure the answer is: high (the evidence names what was asked and "
            "says it), medium (it answers a question like this one), low (the "
            "closest passage, quoted as such; the answer says so). Null when "
            "refused."
        ),
    )
    conversation_id = serializers.UUIDField(
        help_text="The conversation this turn was stored in; send it to follow up."
    )
    resolved_question = serializers.CharField(
        help_text=(
            "The question as searched: a follow-up made to stand alone against the "
            "conversation's previous turns, otherwise the question as asked."
        )
    )
