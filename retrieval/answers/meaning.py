"""How close a sentence is to a question in meaning, not in words.

A semantic embedder (multilingual E5 by default, `CHAT_MEANING_PROVIDER` names one
of `EMBEDDING_PROVIDERS`) embeds the question as a query and the candidate units
as passages. What the answerer reads is not the cosine itself (its scale differs
by language and by model) but how far the best unit stands out from the others
found for the same question (`standout`): a sentence that says what was asked
stands out; on-topic sentences around a question nobody answers do not.

Vectors of unit texts are kept in a bounded in-process cache: the units of a
knowledge base's popular passages are embedded once per process.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from ..embeddings import Embedder, EmbedderUnavailable

logger = logging.getLogger(__name__)

CACHE_SIZE = 50_000


class Meaning:
    """Cosines of a question to texts, through `embedder`."""

    def __init__(self, embedder: Embedder, *, cache_size: int = CACHE_SIZE) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def cosines(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """The cosine of `question` to each of `texts` (rows are normalised)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        asked = self.embedder.embed_queries([question])[0]
        return self._vectors(texts) @ asked

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            known = {text: self._cache.get(text) for text in texts}
            for text, vector in known.items():
                if vector is not None:
                    self._cache.move_to_end(text)
        missing = [text for text, vector in known.items() if vector is None]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                known[text] = vector
            with self._lock:
                for text in missing:
                    self._cache[text] = known[text]
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return np.stack([known[text] for text in texts])


def standout(cosines: Sequence[float]) -> float:
    """How far the first cosine (the best unit's) is above the median of all."""
    if len(cosines) < 2:
        return 0.0
    return float(cosines[0] - np.median(np.asarray(cosines)))


@cache
def get_meaning() -> Meaning | None:
    """The process-wide model named by `CHAT_MEANING_PROVIDER`; None without one
    (or when it cannot load here: then answers rest on words alone)."""
    name = settings.CHAT_MEANING_PROVIDER
    if not name:
        return None
    path = settings.EMBEDDING_PROVIDERS.get(name)
    if path is None:
        logger.warning("CHAT_MEANING_PROVIDER=%s is not an embedding provider", name)
        return None
    try:
        return Meaning(import_string(path).from_settings())
    except EmbedderUnavailable as error:
        logger.warning(
            "CHAT_MEANING_PROVIDER=%s cannot run here (%s): answers rest on the "
            "question's words alone",
            name,
            error,
        )
        return None
