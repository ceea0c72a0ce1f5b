from django.urls import path

from . import views

urlpatterns = [
    path(
        "documents/<uuid:document_id>/changes",
        views.DocumentChangesView.as_view(),
        name="document-changes",
    ),
]
