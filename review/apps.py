from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The reviewers' admin pages: documents with their tasks and changes."""

    name = "review"
    verbose_name = "Review"
