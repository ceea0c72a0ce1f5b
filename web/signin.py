"""Sign in and out for every member (staff keep the admin's own page), behind
the login throttle and lockout the API and the admin use."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from accounts.client_address import client_address
from accounts.login_attempts import login_attempt_begin
from core.errors import TooManyRequests


@method_decorator(sensitive_post_parameters(), name="dispatch")
class SignInView(auth_views.LoginView):
    template_name = "web/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            login_attempt_begin(
                address=client_address(request),
                username=request.POST.get("username", ""),
            )
        except TooManyRequests as refusal:
            response = render(
                request,
                "web/login.html",
                {"form": self.get_form_class()(request), "refusal": refusal.detail},
                status=refusal.http_status,
            )
            response["Retry-After"] = str(refusal.retry_after)
            return response
        return super().post(request, *args, **kwargs)


class SignOutView(auth_views.LogoutView):
    """POST only (Django's LogoutView), so a link elsewhere cannot sign anyone out."""
