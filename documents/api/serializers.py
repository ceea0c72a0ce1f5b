from __future__ import annotations

from rest_framework import serializers

from documents.models import Document, DocumentStatus, Role


class KnowledgeBaseSerializer(serializers.Serializer):
    knowledge_base_id = serializers.CharField(source="id")
    name = serializers.CharField()
    description = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)


class DocumentSerializer(serializers.ModelSerializer):
    document_id = serializers.UUIDField(source="id")
    knowledge_base_id = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", default=None)

    class Meta:
        model = Document
        fields = [
            "document_id",
            "knowledge_base_id",
            "family_id",
            "version",
            "filename",
            "content_type",
            "size_bytes",
            "sha256",
            "status",
            "lock_version",
            "created_by",
            "created_at",
            "updated_at",
            "published_at",
            "review_note",
        ]
        read_only_fields = fields


class DocumentUploadSerializer(serializers.Serializer):
    """The form; `knowledge_base_id` may come in the query string instead (context
    `query_knowledge_base_id`), which lets the role be checked before the body."""

    file = serializers.FileField(allow_empty_file=True)
    knowledge_base_id = serializers.CharField(max_length=64)
    document_family_id = serializers.UUIDField(required=False)
    version = serializers.IntegerField(required=False, min_value=1, max_value=100_000)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.query_knowledge_base_id = self.context.get("query_knowledge_base_id")
        if self.query_knowledge_base_id:
            self.fields["knowledge_base_id"].required = False

    def validate(self, attrs: dict) -> dict:
        in_form = attrs.get("knowledge_base_id")
        in_query = self.query_knowledge_base_id
        if in_form and in_query and in_form != in_query:
            raise serializers.ValidationError(
                {
                    "knowledge_base_id": "The form and the query string name "
                    "different knowledge bases."
                }
            )
        attrs["knowledge_base_id"] = in_form or in_query
        return attrs


class DocumentFilterSerializer(serializers.Serializer):
    knowledge_base_id = serializers.CharField(required=False, max_length=64)
    status = serializers.ChoiceField(choices=DocumentStatus.choices, required=False)


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
