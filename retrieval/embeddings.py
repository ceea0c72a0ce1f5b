"""Text embedders: one protocol, the registry, and the local hashing embedder.

`get_embedder()` builds the provider that the `EMBEDDING_PROVIDER` setting names in
the `EMBEDDING_PROVIDERS` registry: multilingual E5 from a wheel by default
(`retrieval.e5_embeddings`), an OpenAI-compatible server's model
(`retrieval.openai_embeddings`), or `HashingEmbedder`. A provider that cannot run
here (`EmbedderUnavailable`: its package or model is missing) is replaced by the
hashing embedder, with a warning: vectors are stored with the name of the embedder
that made them, and a question is only compared with vectors of its own embedder.

`HashingEmbedder` needs no network and no model: features are hashed into a fixed
number of dimensions (the "hashing trick"). Its quality is that of a bag of words
and bigrams, enough for lexical similarity and for running the whole pipeline
offline and fast (the tests use it).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import Protocol

import numpy as np

from retrieval.tokens import cjk_ngrams, term_runs

logger = logging.getLogger(__name__)


class Embedder(Protocol):
    """An embedder may also set `portable = True`: it is pure computation that
    pickles small, so the parser processes can run it beside the parse.

    `name` names the vectors: two embedders whose vectors may not be compared
    have different names. `vector_weight` is the weight of its list in hybrid-v1's
    rank fusion unless RETRIEVAL_VECTOR_WEIGHT is set (docs/retrieval-quality.md).
    """

    name: str
    dimension: int
    vector_weight: float

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages: float32 array of shape (len(texts), dimension) with
        L2-normalised rows.

        An empty text gives a zero row.
        """
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions, as `embed` does passages (a model trained with a prefix per
        side embeds them differently)."""
        ...


class EmbedderUnavailable(Exception):
    """A provider cannot run in this process (its package or model is missing)."""


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
    # Tuned on CMRC 2018 dev (docs/retrieval-quality.md): a bag of words adds
    # candidates, but its ranking is worth a fifth of the keyword list's.
    vector_weight = 0.2

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.name = f"hashing-v2-{dimension}"
        # The provider this one replaces because it cannot run here ("": none).
        self.stands_in_for = ""
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

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


@cache
def get_embedder() -> Embedder:
    """The process-wide embedder named by `EMBEDDING_PROVIDER`, or the hashing
    embedder standing in for one that cannot run here (logged once a process)."""
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
    try:
        return import_string(path).from_settings()
    except EmbedderUnavailable as error:
        stand_in = HashingEmbedder.from_settings()
        stand_in.stands_in_for = name
        logger.warning(
            "EMBEDDING_PROVIDER=%s cannot run here (%s): this process uses the "
            "hashing embedder (%s) instead. Its searches compare questions only "
            "with chunks that embedder made, and documents it ingests get its "
            "vectors; fix the installation, then run manage.py reindex_chunks.",
            name,
            error,
            stand_in.name,
        )
        return stand_in


STAND_IN_HINT = (
    "EMBEDDING_PROVIDER cannot load in this process (its log says why) and the "
    "hashing embedder stands in: questions are compared only with chunks it "
    "embedded. Install requirements.txt, restart, then run manage.py "
    "reindex_chunks for the chunks embedded meanwhile."
)


def embedder_check() -> str:
    """The `/api/health/ready` line: whether the configured embedder runs here."""
    return "stand-in" if getattr(get_embedder(), "stands_in_for", "") else "ok"


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
