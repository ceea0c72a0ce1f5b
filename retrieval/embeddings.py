"""Text embedders: one protocol, and a local hashing embedder as the default.

`HashingEmbedder` needs no network and no model download: features are hashed into a
fixed number of dimensions (the "hashing trick"). Its quality is that of a bag of words
and bigrams, enough for lexical similarity and for running the whole pipeline offline;
a neural provider can replace it behind `get_embedder()`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Protocol

import numpy as np

from retrieval.tokens import cjk_ngrams, iter_terms


class ProviderUnavailable(Exception):
    """An embedding or chat provider timed out or could not be reached (transient)."""


class Embedder(Protocol):
    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Float32 array of shape (len(texts), dimension) with L2-normalised rows.

        An empty text gives a zero row.
        """
        ...


def _features(text: str) -> list[str]:
    """Word unigrams and bigrams for Latin text, character n-grams for CJK runs."""
    features: list[str] = []
    previous: str | None = None
    for is_cjk, term in iter_terms(text):
        if is_cjk:
            features.extend(cjk_ngrams(term))
            previous = None
        else:
            features.append(term)
            if previous is not None:
                features.append(f"{previous} {term}")
            previous = term
    return features


class HashingEmbedder:
    """Signed feature hashing with sublinear term frequency, L2-normalised.

    Deterministic across processes and machines: the hash is BLAKE2b, not Python's
    salted `hash()`. The dimension and the feature scheme are part of `name`, so
    vectors stored under one name are never compared with vectors of another.
    """

    _CACHE_LIMIT = 500_000

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.name = f"hashing-v1-{dimension}"
        # feature -> slot + 1, negated for a negative sign (0 never occurs)
        self._slots: dict[str, int] = {}

    def _slot(self, feature: str) -> int:
        slot = self._slots.get(feature)
        if slot is None:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            slot = value % self.dimension + 1
            if value >> 63:
                slot = -slot
            if len(self._slots) >= self._CACHE_LIMIT:
                self._slots.clear()
            self._slots[feature] = slot
        return slot

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = Counter(_features(text))
            if not counts:
                continue
            slots = np.fromiter(
                map(self._slot, counts), dtype=np.int64, count=len(counts)
            )
            weights = 1.0 + np.log(
                np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
            )
            matrix[row] = np.bincount(
                np.abs(slots) - 1,
                weights=np.sign(slots) * weights,
                minlength=self.dimension,
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return matrix


@cache
def get_embedder() -> Embedder:
    """The process-wide embedder chosen by settings (hashing unless configured)."""
    from django.conf import settings

    if not settings.configured:
        return HashingEmbedder()
    if settings.EMBEDDING_PROVIDER == "openai-compatible":
        from .providers import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder.from_settings()
    return HashingEmbedder(settings.EMBEDDING_DIMENSION)


def to_bytes(vector: np.ndarray) -> bytes:
    """Little-endian float32 bytes, for storing a vector in a binary column."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes, dimension: int) -> np.ndarray:
    if len(data) != dimension * 4:
        raise ValueError(f"expected {dimension * 4} bytes, got {len(data)}")
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0.0 when either is zero)."""
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / denominator if denominator else 0.0
