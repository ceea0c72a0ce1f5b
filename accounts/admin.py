"""API tokens in the admin: superusers only, and never a token or its digest."""

from __future__ import annotations

from django.contrib import admin
from knox.models import AuthToken

from .models import ApiToken

admin.site.unregister(AuthToken)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["user", "created", "expiry"]
    list_select_related = ["user"]
    search_fields = ["user__username"]
    fields = ["user", "created", "expiry"]
    readonly_fields = fields
    ordering = ["-created"]

    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        # Deleting revokes; tokens are only made by logging in.
        return self.has_module_permission(request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
