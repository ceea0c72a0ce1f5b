from __future__ import annotations

from rest_framework import serializers

from retrieval.models import Chunk
from retrieval.search import DEFAULT_PROFILE, PROFILES


class ChunkSerializer(serializers.ModelSerializer):
    chunk_id = serializers.IntegerField(source="id")

    class Meta:
        model = Chunk
        fields = [
            "chunk_id",
            "ordinal",
            "text",
            "heading_path",
            "page",
            "char_start",
            "char_end",
            "ocr_confidence",
        ]
        read_only_fields = fields


class SearchRequestSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=2000, trim_whitespace=True)
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=50
    )
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=10)
    profile = serializers.ChoiceField(choices=PROFILES, default=DEFAULT_PROFILE)


class SearchResultSerializer(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    chunk_ids = serializers.ListField(child=serializers.IntegerField())
    document_id = serializers.UUIDField()
    document_version = serializers.IntegerField()
    knowledge_base_id = serializers.CharField()
    filename = serializers.CharField()
    heading_path = serializers.ListField(child=serializers.CharField())
    page = serializers.IntegerField(allow_null=True)
    score = serializers.FloatField()
    text = serializers.CharField()


class SearchResponseSerializer(serializers.Serializer):
    profile = serializers.CharField()
    results = SearchResultSerializer(many=True, source="passages")


class DebugRequestSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=2000)
    profile = serializers.ChoiceField(choices=PROFILES, default=DEFAULT_PROFILE)
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=50
    )


class DebugHitSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    chunk_id = serializers.IntegerField()
    document_id = serializers.UUIDField()
    knowledge_base_id = serializers.CharField()
    score = serializers.FloatField()


class DebugResponseSerializer(serializers.Serializer):
    profile = serializers.CharField()
    keyword = DebugHitSerializer(many=True)
    vector = DebugHitSerializer(many=True)
    fused = DebugHitSerializer(many=True)
    reranked = DebugHitSerializer(many=True)
