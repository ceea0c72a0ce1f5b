from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts.views import admin_login
from config.metrics import metrics_view

handler404 = "core.api_errors.not_found_view"
handler500 = "core.api_errors.server_error_view"

urlpatterns = [
    # Before the admin's own URLs: its login page behind the login throttles.
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("accounts.api.urls")),
    path("api/", include("documents.api.urls")),
    path("api/", include("ingestion.api.urls")),
    path("api/", include("retrieval.api.urls")),
    path("api/", include("conversations.api.urls")),
    path("api/", include("review.api.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("web.urls")),
]
