from django.urls import path

from . import chat_views, conversation_views, feedback_views, views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/chunks",
        views.DocumentChunkListView.as_view(),
        name="document-chunks",
    ),
    path(
        "documents/<uuid:document_id>/changes",
        views.DocumentChangesView.as_view(),
        name="document-changes",
    ),
    path("search", views.SearchView.as_view(), name="search"),
    path("retrieval/debug", views.RetrievalDebugView.as_view(), name="retrieval-debug"),
    path("chat", chat_views.ChatView.as_view(), name="chat"),
    path("chat/stream", chat_views.ChatStreamView.as_view(), name="chat-stream"),
    path("chat/feedback", feedback_views.FeedbackView.as_view(), name="chat-feedback"),
    path(
        "answers/to-check",
        feedback_views.AnswersToCheckView.as_view(),
        name="answers-to-check",
    ),
    path(
        "conversations",
        conversation_views.ConversationListView.as_view(),
        name="conversations",
    ),
    path(
        "conversations/<uuid:conversation_id>",
        conversation_views.ConversationDetailView.as_view(),
        name="conversation",
    ),
]
