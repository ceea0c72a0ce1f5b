"""Embeddings from an OpenAI-compatible server (`openai-compatible` provider)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .errors import ProviderUnavailable
from .openai_client import OpenAICompatibleClient


class OpenAICompatibleEmbedder:
    """`POST {base}/embeddings`; rows normalised to unit length, float32.

    The dimension comes from `OPENAI_EMBEDDING_DIMENSION`, or from the server's
    first answer when that setting is 0. Questions and passages are embedded
    alike (a generic endpoint has no notion of sides).
    """

    # The weight the hashing embedder was tuned to: a remote model's is unmeasured.
    vector_weight = 0.2

    def __init__(
        self, client: OpenAICompatibleClient, *, model: str, dimension: int = 0
    ) -> None:
        self.client = client
        self.model = model
        self.name = f"openai:{model}"
        self._dimension = dimension or None

    @classmethod
    def from_settings(cls) -> OpenAICompatibleEmbedder:
        if not settings.OPENAI_EMBEDDING_MODEL:
            raise ImproperlyConfigured(
                "EMBEDDING_PROVIDER=openai-compatible needs OPENAI_EMBEDDING_MODEL."
            )
        return cls(
            OpenAICompatibleClient.from_settings(),
            model=settings.OPENAI_EMBEDDING_MODEL,
            dimension=settings.OPENAI_EMBEDDING_DIMENSION,
        )

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self._request(["dimension probe"])[0])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        wanted = [row for row, text in enumerate(texts) if text.strip()]
        rows = self._request([texts[row] for row in wanted]) if wanted else []
        dimension = self._dimension or (len(rows[0]) if rows else self.dimension)
        self._dimension = dimension
        matrix = np.zeros((len(texts), dimension), dtype=np.float32)
        for row, vector in zip(wanted, rows, strict=True):
            if len(vector) != dimension:
                raise ProviderUnavailable(
                    f"The provider returned {len(vector)} dimensions, "
                    f"expected {dimension}."
                )
            matrix[row] = vector
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return matrix

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def _request(self, texts: list[str]) -> list[list[float]]:
        body = self.client.post("embeddings", {"model": self.model, "input": texts})
        try:
            data = sorted(body["data"], key=lambda item: item.get("index", 0))
            rows = [[float(x) for x in item["embedding"]] for item in data]
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ProviderUnavailable(
                "The provider's embeddings answer has an unexpected shape."
            ) from error
        if len(rows) != len(texts) or not all(rows):
            raise ProviderUnavailable(
                f"The provider returned {len(rows)} embeddings for {len(texts)} texts."
            )
        return rows
