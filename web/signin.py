"""Sign in and out for every member (staff keep the admin's own page), behind
the login rule the API and the admin share (accounts/login_attempts.py)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from accounts.login_attempts import AccountLocked, login_attempt_begin
from core.errors import TooManyRequests


@method_decorator(sensitive_post_parameters(), name="dispatch")
class SignInView(auth_views.LoginView):
    template_name = "web/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            login_attempt_begin(request, username=request.POST.get("username", ""))
        except TooManyRequests as refusal:
            # Said in minutes at least: "0 minutes" would read as "now".
            wait = timedelta(seconds=max(60, refusal.retry_after))
            response = render(
                request,
                "web/login.html",
                {
                    "form": self.get_form_class()(request),
                    "refusal": refusal.detail,
                    "locked": isinstance(refusal, AccountLocked),
                    "retry_at": timezone.now() + wait,
                },
                status=refusal.http_status,
            )
            response["Retry-After"] = str(refusal.retry_after)
            return response
        return super().post(request, *args, **kwargs)


class SignOutView(auth_views.LogoutView):
    """POST only (Django's LogoutView), so a link elsewhere cannot sign anyone out."""
