from django.urls import path

from . import answers, ask, document_pages, review, signin, sources

app_name = "web"

urlpatterns = [
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", signin.SignOutView.as_view(), name="logout"),
    path("review/", review.queue, name="review"),
    path("review/<uuid:document_id>/", review.document_page, name="review-document"),
    path("review/<uuid:document_id>/publish/", review.publish, name="review-publish"),
    path("review/<uuid:document_id>/reject/", review.reject, name="review-reject"),
    path(
        "documents/<uuid:document_id>/pages/<int:page>.png",
        document_pages.page_image,
        name="document-page",
    ),
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
