"""A search backend built from scratch at every query: the conformance oracle.

`ScratchBackend` reads the published chunks of the knowledge bases it is asked
for when a searcher is made, and scores them by the book: BM25 (k1 1.2, b 0.75,
idf ln(1 + (N - df + 0.5) / (df + 0.5))), its statistics per knowledge base as a
search engine keeps them per index, and cosine in float64. No cache, no index, no
state: nothing can go stale, so what the engine serves is checked against it
(tests/retrieval/backends/). It shares only the chunks' stored terms and vectors
with the engine, never its code. Linear in the chunks at every query: tests and
small installations only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from documents.models import DocumentStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from retrieval.terms import TOKENIZER, chunk_terms, decode, term_hash

from . import Candidate, Health

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class _Row:
    candidate: Candidate  # its score 0
    terms: dict[int, int]  # term hash -> count
    length: int
    vector: np.ndarray  # float64; zeros when another embedder made it


class _Statistics:
    def __init__(self, rows: list[_Row]) -> None:
        self.size = len(rows)
        self.average = (sum(row.length for row in rows) / len(rows) if rows else 0) or 1
        self.frequencies = Counter(hashed for row in rows for hashed in row.terms)

    def idf(self, hashed: int) -> float:
        frequency = self.frequencies[hashed]
        return math.log1p((self.size - frequency + 0.5) / (frequency + 0.5))


class _Total:
    """The statistics of several knowledge bases: their sums."""

    def __init__(self, parts: list[_Statistics]) -> None:
        self.parts = parts
        self.size = sum(part.size for part in parts)

    def frequency(self, term: str) -> int:
        return sum(part.frequencies[term_hash(term)] for part in self.parts)


class ScratchSearcher:
    def __init__(self, knowledge_base_ids: Sequence[str]) -> None:
        self.knowledge_base_ids = sorted(set(knowledge_base_ids))
        rows = _published_rows(self.knowledge_base_ids)
        self._rows = {row.candidate.chunk_id: row for row in rows}
        self._statistics = {
            kb_id: _Statistics(
                [row for row in rows if row.candidate.knowledge_base_id == kb_id]
            )
            for kb_id in self.knowledge_base_ids
        }
        self.statistics = _Total(list(self._statistics.values()))

    def bm25(self, terms: Sequence[str], chunk_id: int) -> float:
        row = self._rows[chunk_id]
        statistics = self._statistics[row.candidate.knowledge_base_id]
        score = 0.0
        for term, asked in Counter(terms).items():
            count = row.terms.get(term_hash(term), 0)
            norm = K1 * (1 - B + B * row.length / statistics.average)
            idf = statistics.idf(term_hash(term))
            score += asked * idf * count * (K1 + 1) / (count + norm)
        return score

    def cosine(self, vector: np.ndarray, chunk_id: int) -> float:
        chunk_vector = self._rows[chunk_id].vector
        norms = np.linalg.norm(chunk_vector) * np.linalg.norm(vector)
        return float(chunk_vector @ vector / norms) if norms else 0.0

    def keyword(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        return self._best({pk: self.bm25(terms, pk) for pk in self._rows}, limit)

    def nearest(self, vector: np.ndarray, limit: int) -> list[Candidate]:
        vector = np.asarray(vector, dtype=np.float64)
        return self._best({pk: self.cosine(vector, pk) for pk in self._rows}, limit)

    def keyword_scores(
        self, terms: Sequence[str], candidates: Sequence[Candidate]
    ) -> list[float]:
        return [self.bm25(terms, candidate.chunk_id) for candidate in candidates]

    def _best(self, scores: dict[int, float], limit: int) -> list[Candidate]:
        ranked = sorted(
            ((pk, score) for pk, score in scores.items() if score > 0),
            key=lambda pair: (-pair[1], pair[0]),
        )
        return [
            replace(self._rows[pk].candidate, score=score)
            for pk, score in ranked[:limit]
        ]


def _published_rows(knowledge_base_ids: list[str]) -> list[_Row]:
    """Chunks whose version is published in the knowledge base they are in."""
    embedder = get_embedder()
    chunks = Chunk.objects.filter(
        knowledge_base_id__in=knowledge_base_ids,
        document__knowledge_base_id__in=knowledge_base_ids,
        document__status=DocumentStatus.PUBLISHED,
    ).order_by("pk")
    rows = []
    for chunk in chunks.iterator():
        if chunk.tokenizer == TOKENIZER:
            blob, length = bytes(chunk.terms), chunk.term_count
            folds = chunk.folds
        else:  # made by another tokenizer: made again, as a reindex would
            made = chunk_terms(chunk.text, chunk.heading_path)
            blob, length, folds = made.terms, made.length, made.folds
        hashes, counts = decode(blob)
        vector = np.zeros(embedder.dimension)
        if chunk.embedding_model == embedder.name:
            stored = np.frombuffer(bytes(chunk.embedding), dtype="<f4")
            if len(stored) == embedder.dimension:
                vector = stored.astype(np.float64)
        candidate = Candidate(
            chunk_id=chunk.pk,
            document_id=chunk.document_id,
            knowledge_base_id=chunk.knowledge_base_id,
            ordinal=chunk.ordinal,
            score=0.0,
            folds=folds,
        )
        terms = dict(zip(hashes.tolist(), counts.tolist(), strict=True))
        rows.append(_Row(candidate, terms, length, vector))
    return rows


class ScratchBackend:
    """Reads the database at every `searcher()`: publishes and archives need no
    notice."""

    def searcher(
        self,
        knowledge_base_ids: Sequence[str],
        versions: Mapping[str, int] | None = None,
    ) -> ScratchSearcher:
        return ScratchSearcher(knowledge_base_ids)

    def published(self, knowledge_base_id: str, document_id: object) -> None:
        pass

    def withdrawn(self, knowledge_base_id: str, document_id: object) -> None:
        pass

    def discard(self, knowledge_base_id: str) -> None:
        pass

    def health(self) -> Health:
        return Health("ready")
