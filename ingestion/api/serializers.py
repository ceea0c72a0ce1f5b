from __future__ import annotations

from rest_framework import serializers

from ingestion.models import IngestionTask, TaskStatus


class IngestionTaskSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField(source="id")
    document_id = serializers.UUIDField()
    available_at = serializers.SerializerMethodField()
    waiting_for_turn = serializers.BooleanField(read_only=True)

    class Meta:
        model = IngestionTask
        fields = [
            "task_id",
            "document_id",
            "status",
            "stage",
            "completed",
            "total",
            "attempt",
            "lane",
            "yields",
            "yielded_at",
            "waiting_for_turn",
            "error_code",
            "error_detail",
            "worker_id",
            "available_at",
            "lease_expires_at",
            "created_at",
            "updated_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_available_at(self, task: IngestionTask) -> str | None:
        if task.status != TaskStatus.RETRY_WAIT:
            return None
        return serializers.DateTimeField().to_representation(task.available_at)
