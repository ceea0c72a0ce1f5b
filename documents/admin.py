"""Knowledge bases and memberships in the admin, and what every member-scoped admin
page builds on (`MemberScopedAdmin`, `MemberKnowledgeBaseFilter`).

The review pages of documents combine apps and live above them, in `review/`.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet

from . import selectors
from .models import KnowledgeBase, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    """Superusers only: whoever edits memberships decides who reads what."""

    list_display = ["id", "name", "member_count", "index_version", "created_at"]
    search_fields = ["id", "name"]
    readonly_fields = ["index_version", "created_at"]
    inlines = [MembershipInline]

    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    @admin.display(description="Members")
    def member_count(self, knowledge_base: KnowledgeBase) -> int:
        return knowledge_base.memberships.count()

    def get_readonly_fields(self, request, obj=None):
        # The id is part of every URL and API call: fixed once created.
        return [*self.readonly_fields, "id"] if obj else self.readonly_fields


class MemberKnowledgeBaseFilter(admin.RelatedFieldListFilter):
    """Offers only the caller's knowledge bases: their names are not for others."""

    def field_choices(self, field, request, model_admin):
        scope = model_admin.member_scope(request)
        limit = {} if scope is None else {"pk__in": scope}
        return field.get_choices(
            include_blank=False,
            limit_choices_to=limit,
            ordering=self.field_admin_ordering(field, request, model_admin),
        )


class MemberScopedAdmin(admin.ModelAdmin):
    """Staff see what the API shows them; superusers see all.

    `visible_to` is the API's selector for the model, so the changelist, the change
    page, downloads, polling and actions (Django builds their querysets from
    `get_queryset`) apply the API's role rules: a viewer sees published versions
    and what belongs to them, never a draft.
    """

    def visible_to(self, user) -> QuerySet:
        raise NotImplementedError("a member-scoped admin names its API selector")

    def member_scope(self, request) -> list[str] | None:
        """The caller's knowledge bases (None: all), for the list filters."""
        if request.user.is_superuser:
            return None
        return selectors.knowledge_base_ids_for(request.user)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(pk__in=self.visible_to(request.user).values("pk"))

    def has_module_permission(self, request) -> bool:
        user = request.user
        return (
            user.is_active
            and user.is_staff
            and (user.is_superuser or bool(selectors.knowledge_base_ids_for(user)))
        )

    def has_view_permission(self, request, obj=None) -> bool:
        if not self.has_module_permission(request):
            return False
        if obj is None or request.user.is_superuser:
            return True
        return self.visible_to(request.user).filter(pk=obj.pk).exists()

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
