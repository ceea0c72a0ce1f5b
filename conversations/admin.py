"""Conversations for operators: who has how many turns, and how old they are.

Read-only, and without the questions or answers: they may quote knowledge bases
the operator is not a member of. Pruning is `manage.py prune_conversations`.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count

from .models import Conversation


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "created_at", "updated_at", "turn_count"]
    list_select_related = ["owner"]
    search_fields = ["owner__username"]
    date_hierarchy = "updated_at"
    fields = ["id", "owner", "created_at", "updated_at", "turn_count"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(turns_kept=Count("turns"))

    @admin.display(description="Turns", ordering="turns_kept")
    def turn_count(self, conversation: Conversation) -> int:
        return conversation.turns_kept

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
