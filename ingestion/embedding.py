"""The embedding stage in the worker: the chunks' vectors (when the parsers did
not make them: PDFs, remote embedders) and the sentences' vectors that the
answerer's model of meaning keeps.

Both go a batch at a time, each batch kept as it is made (the chunks' in
`checkpoints.py`, the sentences' in the meaning store), and after each kept
batch `turn_over()` may raise to give the worker up: the next turn starts at the
next batch, and its result equals an uninterrupted run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from retrieval.errors import ProviderUnavailable
from retrieval.sentences import sentence_texts

from .checkpoints import Checkpoints
from .models import ErrorCode, TaskStage

Report = Callable[[str, int, int], None]


class EmbeddingUnavailable(Exception):
    """The embedding provider cannot be reached (transient)."""

    error_code = ErrorCode.PROVIDER_UNAVAILABLE

    def __init__(self, error: ProviderUnavailable) -> None:
        super().__init__(
            f"The embedding provider is unavailable ({type(error).__name__})."
        )


def embed_chunks(
    embedder,
    chunks: Sequence,
    *,
    batch: int,
    checkpoints: Checkpoints,
    report: Report,
    turn_over: Callable[[], None],
) -> np.ndarray:
    """The chunks' vectors, batch by batch, reusing the batches a turn kept."""
    total = len(chunks)
    kept = checkpoints.vector_batches(batch)
    parts = []
    report(TaskStage.EMBEDDING, 0, total)
    for index, start in enumerate(range(0, total, batch)):
        texts = [chunk.text for chunk in chunks[start : start + batch]]
        vectors = kept.get(index)
        if vectors is None or len(vectors) != len(texts):
            vectors = _embedded(embedder.embed, texts)
            fresh = checkpoints.save_vector_batch(batch, index, vectors)
        else:
            fresh = False
        parts.append(vectors)
        report(TaskStage.EMBEDDING, min(start + batch, total), total)
        if fresh:
            turn_over()
    return np.concatenate(parts).astype(np.float32, copy=False)


def embed_sentences(
    meaning,
    chunks: Sequence,
    *,
    batch: int,
    report: Report,
    turn_over: Callable[[], None],
) -> None:
    """The vectors of the chunks' sentences that the model of meaning has not
    stored yet (`retrieval.meaning`): made here, so that no question
    waits for them. Progress counts sentences."""
    if meaning is None or not chunks:
        return
    texts = [
        text
        for chunk in chunks
        for text in sentence_texts(chunk.text, chunk.heading_path, chunk.page)
    ]

    def stored(done: int, total: int) -> None:
        report(TaskStage.EMBEDDING, done, total)
        turn_over()

    _embedded(meaning.remember, texts, batch=batch, on_progress=stored)


def _embedded(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except ProviderUnavailable as error:
        raise EmbeddingUnavailable(error) from error
