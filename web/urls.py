from django.urls import path

from . import answers, ask, signin, sources

app_name = "web"

urlpatterns = [
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", signin.SignOutView.as_view(), name="logout"),
    path("", ask.AskView.as_view(), name="ask"),
    path(
        "conversations/", ask.ConversationListView.as_view(), name="ask-conversations"
    ),
    path(
        "conversations/<uuid:conversation_id>/delete/",
        ask.ConversationDeleteView.as_view(),
        name="ask-conversation-delete",
    ),
    path("sources/<uuid:document_id>/", sources.SourceView.as_view(), name="source"),
    path(
        "review/answers/",
        answers.AnswersToCheckView.as_view(),
        name="answers-to-check",
    ),
]
