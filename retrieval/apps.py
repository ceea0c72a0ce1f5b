from django.apps import AppConfig

from core import readiness


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the system checks)
        from .embeddings import STAND_IN_HINT, embedder_check
        from .search_backends import (
            KEYWORD_SCORER_HINT,
            keyword_scorer_readiness,
            publishing,
            search_readiness,
        )

        publishing.connect()
        readiness.register("search", search_readiness)
        # Reported, not required: search still works, on keywords and its vectors.
        readiness.register(
            "embedder",
            embedder_check,
            required=False,
            hints={"stand-in": STAND_IN_HINT},
        )
        readiness.register(
            "keyword_scorer",
            keyword_scorer_readiness,
            required=False,
            hints={"numpy": KEYWORD_SCORER_HINT},
        )
