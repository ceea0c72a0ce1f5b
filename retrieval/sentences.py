"""The stored vectors of sentences, by a digest of their text.

The answerer compares a question with the best sentences and rows found
(`retrieval.meaning`); embedding them while someone waits costs about a second, so
ingestion embeds every sentence of a document once and stores its vector here. A
sentence is found by its text alone: a new version of a document, or another
document quoting it, finds the vectors already made.

Which sentences and rows of a chunk those are is the answerer's to say (its
evidence units, `answers.evidence.sentence_texts`); being in a layer above, it
says so as it starts (`cut_with`, from `answers/apps.py`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from django.core.exceptions import ImproperlyConfigured

from .models import SentenceVector

LOOKUP_BATCH = 500

Cut = Callable[[str, Sequence[str], int | None], list[str]]
_cut: Cut | None = None


def cut_with(cut: Cut) -> None:
    global _cut  # one answerer, set once as the process starts
    _cut = cut


def sentence_texts(
    text: str, heading_path: Sequence[str] = (), page: int | None = None
) -> list[str]:
    """The sentences and rows of one chunk that the answerer compares with a
    question, as it cuts them."""
    if _cut is None:
        raise ImproperlyConfigured(
            "No answerer cuts chunks into sentences: is `answers` installed?"
        )
    return _cut(text, heading_path, page)


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def stored_vectors(model: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The stored vectors of those of `texts` that have one, by text."""
    by_digest = {digest(text): text for text in texts}
    found: dict[str, np.ndarray] = {}
    keys = list(by_digest)
    for start in range(0, len(keys), LOOKUP_BATCH):
        for key, vector in SentenceVector.objects.filter(
            model=model, digest__in=keys[start : start + LOOKUP_BATCH]
        ).values_list("digest", "vector"):
            found[by_digest[key]] = np.frombuffer(bytes(vector), dtype="<f2").astype(
                np.float32
            )
    return found


def store_vectors(model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
    """Store `vectors` of `texts`; a sentence stored meanwhile keeps its row."""
    SentenceVector.objects.bulk_create(
        [
            SentenceVector(
                model=model,
                digest=digest(text),
                vector=np.asarray(vector, dtype="<f2").tobytes(),
            )
            for text, vector in zip(texts, vectors, strict=True)
        ],
        ignore_conflicts=True,
        batch_size=LOOKUP_BATCH,
    )
