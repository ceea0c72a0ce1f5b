from django.urls import path

from . import views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/chunks",
        views.DocumentChunkListView.as_view(),
        name="document-chunks",
    ),
]
