"""The search backend seam: what `retrieval.search` asks of whatever serves search.

A backend keeps the published chunks of each knowledge base searchable and answers
three questions for one query over the caller's knowledge bases: the best chunks by
keyword (BM25), the nearest chunks by vector, and the keyword statistics the rerank
weighs terms by. Ranking (fusion, rerank, passages) stays in `retrieval.search`,
above the seam, so every backend ranks alike. A chunk's BM25 uses its own knowledge
base's statistics (chunk count, average length, term frequencies): one team's
documents never move another's scores, in any backend. Lists break ties by chunk id.

`SEARCH_BACKEND` names the backend's class by dotted path, as `PASSWORD_HASHERS`
names hashers; `get_search_backend()` returns the process's one instance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from typing import Protocol, runtime_checkable

import numpy as np
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from core.errors import DomainError
from core.readiness import READY_STATES


class SearchUnavailable(DomainError):
    """The backend cannot answer now (down, unreachable): search answers 503."""

    error_code = "search_unavailable"
    http_status = HTTPStatus.SERVICE_UNAVAILABLE
    default_detail = "Search is unavailable right now; try again in a minute."


@dataclass(frozen=True)
class Candidate:
    """A chunk a list found, with its score in that list."""

    chunk_id: int
    document_id: object
    knowledge_base_id: str
    ordinal: int
    score: float
    # Where the backend keeps the chunk (a row of its arrays); opaque above the seam.
    locator: int = -1
    # Its text changes in simplified script: the rerank converts it before
    # looking for the question's word pairs.
    folds: bool = False


class TermStatistics(Protocol):
    """How many published chunks of the searched knowledge bases there are, and
    how many hold a term."""

    size: int

    def frequency(self, term: str) -> int: ...


class Searcher(Protocol):
    """One consistent read of some knowledge bases, for one query."""

    knowledge_base_ids: Sequence[str]
    statistics: TermStatistics

    def keyword(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        """The best `limit` chunks by BM25 over `terms`, score > 0, best first
        (ties by chunk id)."""

    def nearest(self, vector: np.ndarray, limit: int) -> list[Candidate]:
        """The `limit` chunks whose vectors (of the process's embedder) are
        nearest `vector` by cosine, score > 0, best first (ties by chunk id)."""

    def keyword_scores(
        self, terms: Sequence[str], candidates: Sequence[Candidate]
    ) -> list[float]:
        """The BM25 of each candidate over `terms`, in order."""


@dataclass(frozen=True)
class Health:
    status: str  # "ready", "warming" or "unavailable"
    # For operators; with "ready", a readiness word ("ok", "cold", "off") if any.
    detail: str = ""


@runtime_checkable
class SearchBackend(Protocol):
    def searcher(
        self,
        knowledge_base_ids: Sequence[str],
        versions: Mapping[str, int] | None = None,
    ) -> Searcher:
        """Only the published chunks of `knowledge_base_ids`, as of now: a
        publish committed before this call is found, an archive is not.
        `versions`, when given, holds each one's `index_version` as the caller
        read it with its visibility (one query instead of two); a backend reads
        them itself otherwise, or ignores them if it keeps no versions.
        Raises SearchUnavailable when it cannot answer."""

    def published(self, knowledge_base_id: str, document_id: object) -> None:
        """A document version's chunks were published, or made again by
        `reindex_chunks` (after the commit; may come more than once). Raising
        never undoes the publish: it is logged."""

    def withdrawn(self, knowledge_base_id: str, document_id: object) -> None:
        """A document version was archived or deleted (after the commit; may
        come more than once). Raising never undoes it: it is logged."""

    def discard(self, knowledge_base_id: str) -> None:
        """A knowledge base was deleted: forget everything about it."""

    def health(self) -> Health: ...


@cache
def get_search_backend() -> SearchBackend:
    return import_string(settings.SEARCH_BACKEND)()


KEYWORD_SCORER_HINT = (
    "Keyword search scores in numpy, about 1.5 times slower at 100,000 chunks: build "
    "the compiled top-k with `make retrieval/search_backends/snapshots/native/"
    "bm25_top.so` (a C compiler) and restart."
)


def keyword_scorer_readiness() -> str:
    """How the backend finds the best keyword rows, as a `/api/health/ready`
    check: "ok", or "numpy" where the snapshot backend's compiled top-k is not
    built. Reported, not required: results are the same."""
    scorer = getattr(get_search_backend(), "keyword_scorer", None)
    return scorer() if scorer else "ok"


def search_readiness() -> str:
    """The backend's health as a `/api/health/ready` check (`core.readiness`)."""
    try:
        health = get_search_backend().health()
    except Exception:
        return "unavailable"
    if health.status == "ready":
        return health.detail if health.detail in READY_STATES else "ok"
    return health.status


@receiver(setting_changed)
def _forget_backend(*, setting, **kwargs) -> None:
    if setting == "SEARCH_BACKEND":
        get_search_backend.cache_clear()
