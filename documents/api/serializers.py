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
    file = serializers.FileField(allow_empty_file=True)
    knowledge_base_id = serializers.CharField(max_length=64)
    document_family_id = serializers.UUIDField(required=False)
    version = serializers.IntegerField(required=False, min_value=1, max_value=100_000)


class DocumentFilterSerializer(serializers.Serializer):
    knowledge_base_id = serializers.CharField(required=False, max_length=64)
    status = serializers.ChoiceField(choices=DocumentStatus.choices, required=False)


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
