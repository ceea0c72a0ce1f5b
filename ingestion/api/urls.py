from django.urls import path

from . import views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/submit",
        views.DocumentSubmitView.as_view(),
        name="document-submit",
    ),
    path(
        "documents/<uuid:document_id>/ingestion-tasks",
        views.DocumentTaskListView.as_view(),
        name="document-ingestion-tasks",
    ),
    path(
        "ingestion-tasks/<uuid:task_id>",
        views.IngestionTaskDetailView.as_view(),
        name="ingestion-task-detail",
    ),
    path(
        "ingestion-tasks/<uuid:task_id>/retry",
        views.IngestionTaskRetryView.as_view(),
        name="ingestion-task-retry",
    ),
]
