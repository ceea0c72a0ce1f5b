from django.urls import path

from . import document_pages, signin

app_name = "web"

urlpatterns = [
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", signin.SignOutView.as_view(), name="logout"),
    path(
        "documents/<uuid:document_id>/pages/<int:page>.png",
        document_pages.page_image,
        name="document-page",
    ),
]
