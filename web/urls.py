from django.urls import path

from . import signin

app_name = "web"

urlpatterns = [
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", signin.SignOutView.as_view(), name="logout"),
]
