"""Search over the published chunks of the caller's knowledge bases.

Profiles:
- `keyword`: BM25 over jieba / word tokens.
- `vector`: cosine similarity of embeddings.
- `hybrid-v1`: both candidate lists fused by weighted reciprocal rank fusion
  (k=60; the vector list weighs what the embedder's ranking is worth, its
  `vector_weight`, unless `RETRIEVAL_VECTOR_WEIGHT` is set), then the best 30
  reranked by adding `RETRIEVAL_COVERAGE_WEIGHT` x how much of the question a
  chunk covers (its BM25 as a share of the best candidate's) and
  `RETRIEVAL_PROXIMITY_WEIGHT` x how close its terms are (the IDF-weighted share
  of the question's adjacent word pairs found side by side); adjacent chunks of
  one document that both made the cut are merged into one passage. Rank fusion alone
  lets a weak vector list drag good keyword hits down; the coverage term of the
  rerank restores the keyword evidence (docs/retrieval-quality.md).

The question is embedded as a question (`embed_queries`) by the process's embedder
and compared only with chunks that embedder made: the chunks of another embedder
are found by keyword alone until `reindex_chunks` embeds them again.

The candidates come from the search backend (`SEARCH_BACKEND`,
`retrieval.search_backends`); ranking them is this module's job, whatever serves
them. Visibility comes first: only the caller's knowledge bases are searched, and
a backend holds published chunks only. The chunks of the final hits are served
only while their version is still published in one of the caller's knowledge
bases, so that a bookkeeping bug of the backend never serves archived, draft or
another team's text.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field, replace

from django.conf import settings

from core.errors import NotFound, ValidationFailed
from core.prepared import PreparedRead
from documents.models import DocumentStatus
from documents.selectors import index_versions_for

from .embeddings import get_embedder
from .models import Chunk
from .search_backends import Candidate, Searcher, TermStatistics, get_search_backend
from .tokens import normalized, query_tokens, word_pairs

logger = logging.getLogger(__name__)

PROFILES = ("keyword", "vector", "hybrid-v1")
DEFAULT_PROFILE = "hybrid-v1"
RRF_K = 60
CANDIDATES = 50
RERANK_DEPTH = 30


@dataclass
class Hit:
    chunk_id: int
    document_id: object
    knowledge_base_id: str
    ordinal: int
    score: float
    candidate: Candidate  # as the backend found it

    @classmethod
    def of(cls, candidate: Candidate) -> Hit:
        return cls(
            chunk_id=candidate.chunk_id,
            document_id=candidate.document_id,
            knowledge_base_id=candidate.knowledge_base_id,
            ordinal=candidate.ordinal,
            score=candidate.score,
            candidate=candidate,
        )

    def rescored(self, score: float) -> Hit:
        return replace(self, score=score)


@dataclass
class Passage:
    chunk_ids: list[int]
    document_id: object
    document_version: int
    knowledge_base_id: str
    filename: str
    heading_path: list[str]
    page: int | None
    score: float
    text: str

    @property
    def chunk_id(self) -> int:
        return self.chunk_ids[0]


@dataclass
class SearchRun:
    profile: str
    question: str
    statistics: TermStatistics
    keyword: list[Hit] = field(default_factory=list)
    vector: list[Hit] = field(default_factory=list)
    fused: list[Hit] = field(default_factory=list)
    reranked: list[Hit] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)


def searchable_knowledge_bases(user, requested: list[str] | None) -> list[str]:
    """The caller's knowledge bases, narrowed to `requested`; unknown ids are 404."""
    return list(_searchable_versions(user, requested))


def _searchable_versions(user, requested: list[str] | None) -> dict[str, int]:
    """`searchable_knowledge_bases` with each one's index version, read together."""
    mine = index_versions_for(user)
    if not requested:
        return mine
    hidden = sorted(set(requested) - set(mine))
    if hidden:
        raise NotFound(f"Knowledge base not found: {hidden[0]}.")
    return {kb_id: mine[kb_id] for kb_id in sorted(set(requested))}


def search(
    *,
    user,
    question: str,
    knowledge_base_ids: list[str] | None = None,
    top_k: int = 10,
    profile: str = DEFAULT_PROFILE,
) -> SearchRun:
    if profile not in PROFILES:
        raise ValidationFailed(
            f"Unknown profile {profile!r}; use one of {', '.join(PROFILES)}."
        )
    versions = _searchable_versions(user, knowledge_base_ids)
    return search_with(
        get_search_backend().searcher(list(versions), versions),
        question,
        top_k=top_k,
        profile=profile,
    )


def search_with(
    searcher: Searcher, question: str, *, top_k: int, profile: str
) -> SearchRun:
    """Rank what `searcher` finds; passages come only from chunks published in
    its knowledge bases."""
    run = SearchRun(profile=profile, question=question, statistics=searcher.statistics)
    query_terms = query_tokens(question)
    if profile in ("keyword", "hybrid-v1"):
        run.keyword = _hits(searcher.keyword(query_terms, CANDIDATES))
    if profile in ("vector", "hybrid-v1"):
        query_vector = get_embedder().embed_queries([question])[0]
        run.vector = _hits(searcher.nearest(query_vector, CANDIDATES))

    if profile == "keyword":
        ranked = run.keyword
    elif profile == "vector":
        ranked = run.vector
    else:
        run.fused = _fuse(run.keyword, run.vector)
        run.reranked = _rerank(
            run.fused[:RERANK_DEPTH], question, searcher, query_terms
        )
        # Rerank bonuses are never negative, so the unreranked tail stays below.
        ranked = run.reranked + run.fused[RERANK_DEPTH:]
    run.passages = _passages(ranked[:top_k], list(searcher.knowledge_base_ids))
    return run


def _hits(candidates: list[Candidate]) -> list[Hit]:
    return [Hit.of(candidate) for candidate in candidates]


def _fuse(keyword: list[Hit], vector: list[Hit]) -> list[Hit]:
    """Weighted reciprocal rank fusion (k=60), scaled so the best fused hit is 1.

    Ranks, not raw scores, are fused: BM25 and cosine live on different scales.
    A weak embedder's list weighs less than the keyword list, so that it adds
    candidates without dragging good keyword matches down.
    """
    weights = (
        (keyword, settings.RETRIEVAL_KEYWORD_WEIGHT),
        (vector, vector_weight()),
    )
    fused: dict[int, Hit] = {}
    for hits, weight in weights:
        for rank, hit in enumerate(hits, start=1):
            entry = fused.setdefault(hit.chunk_id, hit.rescored(0.0))
            entry.score += weight / (RRF_K + rank)
    ranked = sorted(fused.values(), key=lambda hit: (-hit.score, hit.chunk_id))
    best = ranked[0].score if ranked else 1.0
    for hit in ranked:
        hit.score /= best
    return ranked


def vector_weight() -> float:
    """The vector list's weight in the fusion: the setting, or the embedder's own."""
    if settings.RETRIEVAL_VECTOR_WEIGHT is not None:
        return settings.RETRIEVAL_VECTOR_WEIGHT
    return get_embedder().vector_weight


def _rerank(
    candidates: list[Hit],
    question: str,
    searcher: Searcher,
    query_terms: list[str],
) -> list[Hit]:
    """Add to the fused score how much of the question a chunk covers, and how closely.

    Coverage is the chunk's BM25 score as a share of the best candidate's: the IDF
    weight of the question terms it holds, saturated in term frequency and
    normalised for length. Proximity is the IDF-weighted share of the question's
    adjacent word pairs that occur in the chunk as written, side by side.
    """
    if not candidates:
        return []
    scores = searcher.keyword_scores(query_terms, [hit.candidate for hit in candidates])
    bm25 = {hit.chunk_id: score for hit, score in zip(candidates, scores, strict=True)}
    best_bm25 = max(bm25.values()) or 1.0
    pairs = [
        (first, second, phrase)
        for first, second, phrase in word_pairs(question)
        if _is_meaningful(first) and _is_meaningful(second)
    ]
    weights = _idf_weights(
        sorted({term for first, second, _ in pairs for term in (first, second)}),
        searcher.statistics,
    )
    phrases = [
        (phrase, weights[first] + weights[second]) for first, second, phrase in pairs
    ]
    texts = dict(
        Chunk.objects.filter(pk__in=[hit.chunk_id for hit in candidates]).values_list(
            "id", "text"
        )
    )
    reranked = [
        hit.rescored(
            hit.score
            + settings.RETRIEVAL_COVERAGE_WEIGHT * bm25[hit.chunk_id] / best_bm25
            + settings.RETRIEVAL_PROXIMITY_WEIGHT
            * _share(
                normalized(
                    texts.get(hit.chunk_id, ""),
                    fold=hit.candidate.folds,
                ),
                phrases,
            )
        )
        for hit in candidates
    ]
    reranked.sort(key=lambda hit: (-hit.score, hit.chunk_id))
    return reranked


_PUNCTUATION = re.compile(r"^\W+$")


def _is_meaningful(token: str) -> bool:
    return not _PUNCTUATION.match(token)


def _idf_weights(terms: list[str], statistics: TermStatistics) -> dict[str, float]:
    size = statistics.size or 1
    weights = {}
    for term in terms:
        frequency = statistics.frequency(term)
        weights[term] = math.log1p((size - frequency + 0.5) / (frequency + 0.5))
    return weights


def _share(text: str, weighted: list[tuple[str, float]]) -> float:
    """The weighted share of the strings that occur in `text`."""
    total = sum(weight for _, weight in weighted)
    if not total:
        return 0.0
    return sum(weight for string, weight in weighted if string in text) / total


_PASSAGE_FIELDS = (
    "pk",
    "document_id",
    "knowledge_base_id",
    "text",
    "heading_path",
    "page",
    "char_start",
    "char_end",
    "document__version",
    "document__filename",
    "document__status",
    "document__knowledge_base_id",
)


_PASSAGE_ROWS = PreparedRead(
    lambda chunk_ids: (
        Chunk.objects.filter(pk__in=chunk_ids).order_by().values_list(*_PASSAGE_FIELDS)
    ),
    _PASSAGE_FIELDS,
)


def _published_chunks(hits: list[Hit], knowledge_base_ids: list[str]) -> dict:
    """The hits' chunk rows (named tuples of `_PASSAGE_FIELDS`) by id, those whose
    version is published in one of `knowledge_base_ids` only, whatever the index
    says: a second line of defence.

    Checked on the rows read, not in the WHERE clause, so that the query keeps its
    plan (by primary key): on PostgreSQL with stale statistics a filter on the
    document turned it round, from 0.3 to 5.5 ms at 500 documents. Rows, not model
    instances, no ordering, compiled once: this query is on every search's path.
    """
    searched = set(knowledge_base_ids)
    chunks = {
        row.pk: row
        for row in _PASSAGE_ROWS.rows(list(dict.fromkeys(hit.chunk_id for hit in hits)))
        if row.document__status == DocumentStatus.PUBLISHED
        and row.document__knowledge_base_id in searched
    }
    if len(chunks) < len(hits):
        logger.warning(
            "search: left out %d chunks the index found that are not published in "
            "the searched knowledge bases (archived since, or an index bug)",
            len(hits) - len(chunks),
        )
    return chunks


def _passages(hits: list[Hit], knowledge_base_ids: list[str]) -> list[Passage]:
    """Chunks for the final hits; adjacent chunks of one document become one passage."""
    if not hits:
        return []
    rows = _published_chunks(hits, knowledge_base_ids)
    selected = {(hit.document_id, hit.ordinal): hit for hit in hits}
    passages: list[Passage] = []
    consumed: set[int] = set()
    for hit in hits:
        if hit.chunk_id in consumed or hit.chunk_id not in rows:
            continue
        # Walk to the first selected chunk of this run of adjacent ordinals.
        first = hit.ordinal
        while (hit.document_id, first - 1) in selected:
            first -= 1
        run = []
        ordinal = first
        while (hit.document_id, ordinal) in selected:
            run.append(selected[(hit.document_id, ordinal)])
            ordinal += 1
        chunks = [rows[member.chunk_id] for member in run if member.chunk_id in rows]
        consumed.update(member.chunk_id for member in run)
        head = chunks[0]
        passages.append(
            Passage(
                chunk_ids=[chunk.pk for chunk in chunks],
                document_id=head.document_id,
                document_version=head.document__version,
                knowledge_base_id=head.knowledge_base_id,
                filename=head.document__filename,
                heading_path=list(head.heading_path),
                page=head.page,
                score=max(member.score for member in run),
                text=_join_adjacent(chunks),
            )
        )
    return passages


def _join_adjacent(chunks: list) -> str:
    """One text for consecutive chunks, without repeating their overlap, nor the
    copy of a table's header row that a chunk after the first may start with (its
    offsets cover only the text after that copy)."""
    text = chunks[0].text
    end = chunks[0].char_end
    for chunk in chunks[1:]:
        covered = chunk.char_end - chunk.char_start
        body = chunk.text[max(len(chunk.text) - covered, 0) :]
        if chunk.char_start < end:
            text += body[end - chunk.char_start :]
        else:
            text += "\n\n" + body
        end = max(end, chunk.char_end)
    return text
