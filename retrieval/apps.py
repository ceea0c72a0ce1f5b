from django.apps import AppConfig

from core import readiness


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the system checks)
        from .warmup import search_check

        readiness.register("search", search_check)
