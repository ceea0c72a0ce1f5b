"""Text embedders: one protocol, and a local hashing embedder as the default.

`HashingEmbedder` needs no network and no model download: features are hashed into a
fixed number of dimensions (the "hashing trick"). Its quality is that of a bag of words
and bigrams, enough for lexical similarity and for running the whole pipeline offline;
`get_embedder()` picks it or another provider (an OpenAI-compatible server's model,
`retrieval.openai_embeddings`) from the `EMBEDDING_PROVIDERS` registry by the
`EMBEDDING_PROVIDER` setting.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import Protocol

import numpy as np

from retrieval.tokens import cjk_ngrams, term_runs


class Embedder(Protocol):
    """An embedder may also set `portable = True`: it is pure computation that
    pickles small, so the parser processes can run it beside the parse."""

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
    for is_cjk, terms in term_runs(text):
        features.extend(cjk_ngrams(terms[0]) if is_cjk else _word_features(terms))
    return features


def _word_features(words: list[str]) -> list[str]:
    """Each word, then the pair it ends: w0, w1, "w0 w1", w2, "w1 w2", ...

    The order of the original scheme, which decides the float summation order where
    features collide; built by slices, a third of the time of a loop.
    """
    features = [words[0]] * (2 * len(words) - 1)
    features[1::2] = words[1:]
    features[2::2] = map(" ".join, pairwise(words))
    return features


class HashingEmbedder:
    """Signed feature hashing with sublinear term frequency, L2-normalised.

    Deterministic across processes and machines: the hash is BLAKE2b, not Python's
    salted `hash()`. The dimension and the feature scheme are part of `name`, so
    vectors stored under one name are never compared with vectors of another. The
    features come from the simplified text (`retrieval.tokens`): that is v2, and
    vectors of traditional text stored under v1 hold other features.
    """

    _CACHE_LIMIT = 500_000
    portable = True

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.name = f"hashing-v2-{dimension}"
        # feature -> slot + 1, negated for a negative sign (0 never occurs)
        self._slots: dict[str, int] = {}

    @classmethod
    def from_settings(cls) -> HashingEmbedder:
        from django.conf import settings

        return cls(settings.EMBEDDING_DIMENSION)

    def __getstate__(self) -> dict:
        # Pickled without its feature cache: sent to parser processes per document.
        return {**self.__dict__, "_slots": {}}

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
        # One bincount over the whole batch: numpy calls per row would outweigh the
        # hashing on short chunks.
        slots: list[int] = []
        counts: list[int] = []
        lengths: list[int] = []
        for text in texts:
            features = Counter(_features(text))
            found = list(map(self._slots.get, features))
            if None in found:
                found = [
                    slot if slot is not None else self._slot(feature)
                    for feature, slot in zip(features, found, strict=True)
                ]
            slots.extend(found)
            counts.extend(features.values())
            lengths.append(len(features))
        dimension = self.dimension
        signed_slots = np.array(slots, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        weights = np.sign(signed_slots) * (1.0 + np.log(np.array(counts, np.float64)))
        matrix = (
            np.bincount(
                rows * dimension + np.abs(signed_slots) - 1,
                weights=weights,
                minlength=len(texts) * dimension,
            )
            .reshape(len(texts), dimension)
            .astype(np.float32)
        )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return matrix


@cache
def get_embedder() -> Embedder:
    """The process-wide embedder named by `EMBEDDING_PROVIDER` (hashing by default)."""
    # Parser processes import this module without configuring Django.
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.utils.module_loading import import_string

    if not settings.configured:
        return HashingEmbedder()
    name = settings.EMBEDDING_PROVIDER
    path = settings.EMBEDDING_PROVIDERS.get(name)
    if path is None:
        raise ImproperlyConfigured(
            f"EMBEDDING_PROVIDER={name!r} is not one of "
            f"{', '.join(sorted(settings.EMBEDDING_PROVIDERS))}."
        )
    return import_string(path).from_settings()


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
