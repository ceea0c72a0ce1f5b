from __future__ import annotations

from rest_framework import serializers

from retrieval.models import Chunk


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
        ]
        read_only_fields = fields
