from django.urls import path

from . import signin
from .library import views as library

app_name = "web"

urlpatterns = [
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", signin.SignOutView.as_view(), name="logout"),
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
