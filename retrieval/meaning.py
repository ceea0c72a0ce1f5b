"""How close a sentence is to a question in meaning, not in words.

A semantic embedder (multilingual E5 by default, `CHAT_MEANING_PROVIDER` names one
of `EMBEDDING_PROVIDERS`) embeds the question as a query and the candidate units
as passages. What the answerer reads is not the cosine itself (its scale differs
by language and by model) but how far the best unit stands out from the others
found for the same question (`standout`): a sentence that says what was asked
stands out; on-topic sentences around a question nobody answers do not.

A unit's vector is looked for in a bounded in-process cache, then in the stored
vectors of sentences (`retrieval.sentences`, made at ingestion: `remember`), and
only then made while the question waits (and stored).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Protocol

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from . import sentences
from .embeddings import Embedder, EmbedderUnavailable

logger = logging.getLogger(__name__)

CACHE_SIZE = 50_000


class SentenceStore(Protocol):
    def stored_vectors(self, model: str, texts: Iterable[str]) -> dict: ...

    def store_vectors(
        self, model: str, texts: Sequence[str], vectors: np.ndarray
    ) -> None: ...


class Meaning:
    """Cosines of a question to texts, through `embedder`, with the vectors of
    texts kept in `store` (none: made each time a process first needs them)."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        store: SentenceStore | None = None,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.store = store
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def remember(
        self,
        texts: Sequence[str],
        *,
        batch: int = 32,
        on_progress: Callable[[int, int], None] = lambda done, total: None,
    ) -> int:
        """Embed and store those of `texts` the store lacks, `batch` at a time;
        how many were embedded."""
        texts = list(dict.fromkeys(texts))
        known = self.store.stored_vectors(self.name, texts) if self.store else {}
        missing = [text for text in texts if text not in known]
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            vectors = self.embedder.embed(part)
            if self.store is not None:
                self.store.store_vectors(self.name, part, vectors)
            on_progress(start + len(part), len(missing))
        return len(missing)

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
        if missing and self.store is not None:
            known.update(self.store.stored_vectors(self.name, missing))
            unstored = [text for text in missing if known[text] is None]
            if unstored:
                vectors = self.embedder.embed(unstored)
                known.update(zip(unstored, vectors, strict=True))
                self.store.store_vectors(self.name, unstored, vectors)
        elif missing:
            known.update(zip(missing, self.embedder.embed(missing), strict=True))
        if missing:
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
        return Meaning(import_string(path).from_settings(), store=sentences)
    except EmbedderUnavailable as error:
        logger.warning(
            "CHAT_MEANING_PROVIDER=%s cannot run here (%s): answers rest on the "
            "question's words alone",
            name,
            error,
        )
        return None
