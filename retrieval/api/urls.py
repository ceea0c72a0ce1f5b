from django.urls import path

from . import chat_views, views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/chunks",
        views.DocumentChunkListView.as_view(),
        name="document-chunks",
    ),
    path("search", views.SearchView.as_view(), name="search"),
    path("retrieval/debug", views.RetrievalDebugView.as_view(), name="retrieval-debug"),
    path("chat", chat_views.ChatView.as_view(), name="chat"),
    path("chat/stream", chat_views.ChatStreamView.as_view(), name="chat-stream"),
]
