"""The admin's login page behind the same throttle and lockout as the API's."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters

from core.errors import TooManyRequests

from .login_attempts import login_attempt_begin


@sensitive_post_parameters()
@never_cache
def admin_login(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            login_attempt_begin(request, username=request.POST.get("username", ""))
        except TooManyRequests as refusal:
            response = TemplateResponse(
                request,
                "admin/login_refused.html",
                {
                    **admin.site.each_context(request),
                    "title": "Too many login attempts",
                    "detail": refusal.detail,
                },
                status=refusal.http_status,
            )
            response["Retry-After"] = str(refusal.retry_after)
            return response
    return admin.site.login(request)
