from django.urls import path

from . import views

urlpatterns = [
    path("auth/token", views.TokenView.as_view(), name="auth-token"),
    path("auth/logout", views.LogoutView.as_view(), name="auth-logout"),
    path("auth/logout-all", views.LogoutAllView.as_view(), name="auth-logout-all"),
]
