from django.urls import path

from . import views

urlpatterns = [
    path("health", views.HealthView.as_view(), name="health"),
    path("health/live", views.LivenessView.as_view(), name="health-live"),
    path("health/ready", views.ReadinessView.as_view(), name="health-ready"),
    path(
        "knowledge-bases",
        views.KnowledgeBaseListView.as_view(),
        name="knowledge-base-list",
    ),
    path("documents", views.DocumentListView.as_view(), name="document-list"),
    path(
        "documents/<uuid:document_id>",
        views.DocumentDetailView.as_view(),
        name="document-detail",
    ),
    path(
        "documents/<uuid:document_id>/file",
        views.DocumentFileView.as_view(),
        name="document-file",
    ),
    path(
        "documents/<uuid:document_id>/publish",
        views.DocumentPublishView.as_view(),
        name="document-publish",
    ),
    path(
        "documents/<uuid:document_id>/reject",
        views.DocumentRejectView.as_view(),
        name="document-reject",
    ),
]
