from django.urls import path

from . import answers, ask, document_pages, review, signin, sources
from .library import views as library

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
    path("library/", library.library, name="library"),
    path("library/documents/", library.documents, name="library-documents"),
    path("library/documents/<uuid:document_id>/", library.row, name="library-row"),
    path(
        "library/documents/<uuid:document_id>/submit/",
        library.submit,
        name="library-submit",
    ),
    path("library/tasks/<uuid:task_id>/retry/", library.retry, name="library-retry"),
    path("library/tasks/<uuid:task_id>/cancel/", library.cancel, name="library-cancel"),
]
