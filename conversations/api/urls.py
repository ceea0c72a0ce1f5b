from django.urls import path

from . import chat_views, feedback_views, views

urlpatterns = [
    path("chat", chat_views.ChatView.as_view(), name="chat"),
    path("chat/stream", chat_views.ChatStreamView.as_view(), name="chat-stream"),
    path("chat/feedback", feedback_views.FeedbackView.as_view(), name="chat-feedback"),
    path(
        "answers/to-check",
        feedback_views.AnswersToCheckView.as_view(),
        name="answers-to-check",
    ),
    path("conversations", views.ConversationListView.as_view(), name="conversations"),
    path(
        "conversations/<uuid:conversation_id>",
        views.ConversationDetailView.as_view(),
        name="conversation",
    ),
]
