from __future__ import annotations

from rest_framework import serializers

from conversations.models import AnswerFeedback

from .chat_serializers import UUIDStringField

MAX_SOURCES = 20


class FeedbackSourceInSerializer(serializers.Serializer):
    """One of the answer's `sources`, as `POST /api/chat` returned it; the
    document's name, version and knowledge base are read from the document."""

    id = serializers.CharField(max_length=16, required=False, default="")
    document_id = UUIDStringField()
    page = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    heading_path = serializers.ListField(
        child=serializers.CharField(max_length=500, allow_blank=True),
        max_length=20,
        required=False,
        default=list,
    )
    excerpt = serializers.CharField(
        max_length=4000, allow_blank=True, required=False, default=""
    )


class FeedbackRequestSerializer(serializers.Serializer):
    question = serializers.CharField(min_length=1, max_length=2000)
    answer = serializers.CharField(min_length=1, max_length=20000)
    helpful = serializers.BooleanField(help_text="false: not helpful.")
    comment = serializers.CharField(
        max_length=AnswerFeedback.COMMENT_CHARS,
        allow_blank=True,
        required=False,
        default="",
    )
    refused = serializers.BooleanField(required=False, default=False)
    sources = FeedbackSourceInSerializer(
        many=True, required=False, default=list, max_length=MAX_SOURCES
    )
    conversation_id = UUIDStringField(
        required=False,
        allow_null=True,
        help_text="The conversation the answer was given in, if any.",
    )
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        max_length=50,
        help_text=(
            "The knowledge bases searched: a refusal, which cites nothing, belongs "
            "to them (all the caller's when omitted)."
        ),
    )


class FeedbackSourceSerializer(serializers.Serializer):
    id = serializers.CharField(help_text='"S1", "S2", ... as the answer cited them.')
    document_id = serializers.UUIDField()
    document_version = serializers.IntegerField()
    filename = serializers.CharField()
    knowledge_base_id = serializers.CharField()
    page = serializers.IntegerField(allow_null=True)
    heading_path = serializers.ListField(child=serializers.CharField())
    excerpt = serializers.CharField()


class FeedbackSerializer(serializers.ModelSerializer):
    username = serializers.SerializerMethodField()
    sources = FeedbackSourceSerializer(many=True)
    knowledge_base_ids = serializers.SerializerMethodField()

    class Meta:
        model = AnswerFeedback
        fields = [
            "id",
            "username",
            "conversation_id",
            "question",
            "answer",
            "refused",
            "sources",
            "knowledge_base_ids",
            "helpful",
            "comment",
            "created_at",
        ]
        read_only_fields = fields

    def get_username(self, feedback: AnswerFeedback) -> str | None:
        return feedback.user.get_username() if feedback.user else None

    def get_knowledge_base_ids(self, feedback: AnswerFeedback) -> list[str]:
        return sorted(kb.pk for kb in feedback.knowledge_bases.all())
