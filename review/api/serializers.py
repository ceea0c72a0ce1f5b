"""What a document version changes against the published one, as JSON."""

from __future__ import annotations

from rest_framework import serializers

from review.changes import Comparison
from review.passage_diff import ChangeKind


class PassageSerializer(serializers.Serializer):
    text = serializers.CharField()
    heading_path = serializers.ListField(child=serializers.CharField())
    page = serializers.IntegerField(allow_null=True)


class SegmentSerializer(serializers.Serializer):
    op = serializers.ChoiceField(choices=["equal", "delete", "insert"])
    text = serializers.CharField(trim_whitespace=False)


class PassageChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=[kind.value for kind in ChangeKind])
    old = PassageSerializer(allow_null=True, help_text="In the published version.")
    new = PassageSerializer(allow_null=True, help_text="In this version.")
    similarity = serializers.FloatField(allow_null=True)
    segments = SegmentSerializer(
        many=True, help_text="The inline diff of a changed passage; empty otherwise."
    )


class ChangeSummarySerializer(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField()
    moved = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    passages = serializers.IntegerField(help_text="Passages of this version.")
    published_passages = serializers.IntegerField()
    truncated = serializers.BooleanField(
        help_text="Only the first passages of a very long version were compared."
    )


class DocumentChangesSerializer(serializers.Serializer):
    document_id = serializers.UUIDField(source="document.pk")
    comparison = serializers.ChoiceField(choices=[c.value for c in Comparison])
    published_document_id = serializers.UUIDField(
        source="published.pk", allow_null=True, default=None
    )
    published_version = serializers.IntegerField(
        source="published.version", allow_null=True, default=None
    )
    summary = ChangeSummarySerializer(allow_null=True)
    changes = PassageChangeSerializer(
        source="listed", many=True, help_text="In this version's order, at most 500."
    )
    unlisted_changes = serializers.IntegerField(source="unlisted")
