from django.urls import path

from . import views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/chunks",
        views.DocumentChunkListView.as_view(),
        name="document-chunks",
    ),
    path("search", views.SearchView.as_view(), name="search"),
    path("retrieval/debug", views.RetrievalDebugView.as_view(), name="retrieval-debug"),
]
