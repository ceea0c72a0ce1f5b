"""Retrieval quality: does search put the gold passage first?

The `Evaluator` ingests every passage of a data set as one document of a scratch
knowledge base, asks every question with each search profile and reports
recall@1/5/10, MRR@10 and the median latency. A passage counts as found when a
returned passage comes from its document.

Beside the profiles runs a baseline, `bm25s-jieba`: plain BM25 (the bm25s library,
its defaults) over `jieba.lcut` words of the same passage texts, one per document.
bm25s is a development requirement (requirements-dev.txt): without it the command
says so, and runs with `--no-baseline`.
"""

from __future__ import annotations

import logging
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from retrieval import search
from retrieval.search_backends import get_search_backend
from retrieval.tokens import segmenter

from .datasets import Dataset
from .report import text_table
from .scratch import EvaluationError, ScratchKnowledgeBase

BASELINE = "bm25s-jieba"
TOP_K = 10
COLUMNS = ("profile", "recall@1", "recall@5", "recall@10", "MRR@10", "p50 ms")


# --- Scoring -------------------------------------------------------------------


@dataclass
class ProfileResult:
    profile: str
    ranks: list[int | None] = field(default_factory=list)  # 1-based, None if missed
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, rank: int | None, milliseconds: float) -> None:
        self.ranks.append(rank)
        self.latencies_ms.append(milliseconds)

    def recall(self, k: int) -> float:
        found = sum(1 for rank in self.ranks if rank is not None and rank <= k)
        return found / len(self.ranks) if self.ranks else 0.0

    def mrr(self, k: int = TOP_K) -> float:
        total = sum(1 / rank for rank in self.ranks if rank is not None and rank <= k)
        return total / len(self.ranks) if self.ranks else 0.0

    def row(self) -> dict[str, str | float]:
        return {
            "profile": self.profile,
            "recall@1": round(self.recall(1), 4),
            "recall@5": round(self.recall(5), 4),
            "recall@10": round(self.recall(10), 4),
            "MRR@10": round(self.mrr(10), 4),
            "p50 ms": round(statistics.median(self.latencies_ms), 2)
            if self.latencies_ms
            else 0.0,
        }


@dataclass
class Report:
    dataset: str
    format: str
    passages: int
    chunks: int
    questions: int
    ingest_seconds: float
    results: list[ProfileResult]

    def rows(self) -> list[dict[str, str | float]]:
        return [result.row() for result in self.results]

    def as_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "format": self.format,
            "passages": self.passages,
            "chunks": self.chunks,
            "questions": self.questions,
            "ingest_seconds": round(self.ingest_seconds, 1),
            "rows": self.rows(),
        }

    def table(self) -> str:
        return text_table(
            COLUMNS,
            [
                [
                    str(row["profile"]),
                    *(f"{row[column]:.4f}" for column in COLUMNS[1:5]),
                    f"{row['p50 ms']:.1f}",
                ]
                for row in self.rows()
            ],
        )


def gold_rank(document_ids: Sequence, gold) -> int | None:
    for rank, document_id in enumerate(document_ids[:TOP_K], start=1):
        if document_id == gold:
            return rank
    return None


# --- The run -------------------------------------------------------------------


class Evaluator:
    """Ingest a data set into a scratch knowledge base and measure each profile."""

    def __init__(
        self,
        dataset: Dataset,
        *,
        profiles: Sequence[str] = search.PROFILES,
        baseline: bool = True,
        keep: bool = False,
        write: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.bm25s = bm25s_library() if baseline else None  # before any work
        self.dataset = dataset
        self.profiles = list(profiles)
        self.baseline = baseline
        self.keep = keep
        self.write = write
        self.scratch = ScratchKnowledgeBase(dataset.name, write=write)
        self.knowledge_base_id = self.scratch.id
        self.documents = self.scratch.documents  # passage key -> document id

    def run(self) -> Report:
        try:
            started = time.perf_counter()
            self.scratch.ingest(self.dataset.passages)
            ingest_seconds = time.perf_counter() - started
            results = [self.evaluate(profile) for profile in self.profiles]
            if self.baseline:
                results.append(self.evaluate_baseline())
            return Report(
                dataset=self.dataset.name,
                format=self.dataset.format,
                passages=len(self.documents),
                chunks=self.scratch.chunk_count(),
                questions=len(self.dataset.questions),
                ingest_seconds=ingest_seconds,
                results=results,
            )
        finally:
            if self.keep:
                self.write(f"kept knowledge base {self.knowledge_base_id}")
            else:
                self.scratch.clean_up()

    # --- questions ---

    def evaluate(self, profile: str) -> ProfileResult:
        kb_ids = [self.knowledge_base_id]
        result = ProfileResult(profile)
        # Warm up (jieba's dictionary, the snapshot) outside the timings.
        backend = get_search_backend()
        search.search_with(
            backend.searcher(kb_ids), "warm up", top_k=TOP_K, profile=profile
        )
        for question in self.dataset.questions:
            started = time.perf_counter()
            run = search.search_with(
                backend.searcher(kb_ids),
                question.text,
                top_k=TOP_K,
                profile=profile,
            )
            elapsed = (time.perf_counter() - started) * 1000
            ranked = [passage.document_id for passage in run.passages]
            result.add(gold_rank(ranked, self.documents[question.passage_key]), elapsed)
        self.write(f"{profile}: {len(result.ranks)} questions")
        return result

    def evaluate_baseline(self) -> ProfileResult:
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        passages = self.dataset.passages
        retriever = self.bm25s.BM25()
        retriever.index(
            [jieba_words(passage.text) for passage in passages], show_progress=False
        )
        keys = [passage.key for passage in passages]
        result = ProfileResult(BASELINE)
        for question in self.dataset.questions:
            started = time.perf_counter()
            found, scores = retriever.retrieve(
                [jieba_words(question.text)],
                k=min(TOP_K, len(passages)),
                show_progress=False,
            )
            elapsed = (time.perf_counter() - started) * 1000
            ranked = [
                keys[index]
                for index, score in zip(found[0], scores[0], strict=True)
                if score > 0
            ]
            result.add(gold_rank(ranked, question.passage_key), elapsed)
        self.write(f"{BASELINE}: {len(result.ranks)} questions")
        return result


def bm25s_library():
    """bm25s, imported here: only the baseline needs it, and a service installed
    from requirements.txt alone does not have it."""
    try:
        import bm25s
    except ImportError as error:
        raise EvaluationError(
            "The bm25s-jieba baseline needs bm25s, a development requirement: "
            "pip install -r requirements-dev.txt, or pass --no-baseline."
        ) from error
    return bm25s


_WORD = re.compile(r"\w")


def jieba_words(text: str) -> list[str]:
    """The baseline's tokens: lowercased `jieba.lcut` words, punctuation left out.

    bm25s's own tokenizer drops punctuation too; kept, a "？" in a question
    matches the few passages that hold one and costs the baseline recall
    (docs/retrieval-quality.md, "Baseline `bm25s-jieba`").
    """
    return [word for word in segmenter().lcut(text.lower()) if _WORD.search(word)]
