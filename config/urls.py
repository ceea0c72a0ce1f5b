from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

handler404 = "config.errors.not_found_view"
handler500 = "config.errors.server_error_view"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("documents.api.urls")),
    path("api/", include("ingestion.api.urls")),
    path("api/", include("retrieval.api.urls")),
]
