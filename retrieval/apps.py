from django.apps import AppConfig

from core import readiness


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the system checks)
        from .embeddings import STAND_IN_HINT, embedder_check
        from .warmup import search_check

        readiness.register("search", search_check)
        # Reported, not required: search still works, on keywords and its vectors.
        readiness.register(
            "embedder",
            embedder_check,
            required=False,
            hints={"stand-in": STAND_IN_HINT},
        )
