"""Retrieval quality on question-answering data sets, through the real ingestion path.

A data set is a list of passages and of questions, each question naming its gold
passage. The `Evaluator` ingests every passage as one document of a scratch knowledge
base (upload, submit, worker, publish: the path users take), asks every question with
each search profile and reports recall@1/5/10, MRR@10 and the median latency.
A passage counts as found when a returned passage comes from its document.

Beside the profiles runs a baseline, `bm25s-jieba`: plain BM25 (the bm25s library,
its defaults) over `jieba.lcut` words of the same passage texts, one per document.

Loaders: SQuAD-style JSON (`data -> paragraphs -> context, qas`; CMRC 2018 uses it),
one passage per paragraph; TAT-QA (a list of items with a table, paragraphs and
questions), one passage per item: the table as Markdown rows, then the paragraphs.
"""

from __future__ import annotations

import json
import logging
import re
import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from documents.models import Document, DocumentStatus, KnowledgeBase, Membership, Role
from documents.services import document_publish, document_upload
from ingestion.models import IngestionTask, OutboxEvent, TaskStatus
from ingestion.services import document_submit
from ingestion.worker import Worker

from . import search
from .index import snapshot_cache
from .models import Chunk
from .tokens import _segmenter

FORMATS = ("squad", "tatqa")
BASELINE = "bm25s-jieba"
TOP_K = 10
COLUMNS = ("profile", "recall@1", "recall@5", "recall@10", "MRR@10", "p50 ms")


class DatasetError(ValueError):
    """The file is not a data set this module can read."""


class EvaluationError(RuntimeError):
    """The evaluation could not run (a passage failed to ingest)."""


@dataclass(frozen=True)
class EvalPassage:
    key: str
    text: str  # what the baseline indexes
    filename: str
    content: str  # what is uploaded (Markdown keeps a table's rows apart)


@dataclass(frozen=True)
class EvalQuestion:
    text: str
    passage_key: str


@dataclass(frozen=True)
class Dataset:
    name: str
    format: str
    passages: tuple[EvalPassage, ...]
    questions: tuple[EvalQuestion, ...]

    def limited(self, limit: int | None) -> Dataset:
        """The first `limit` questions; every passage stays, as distractors."""
        if limit is None:
            return self
        return replace(self, questions=self.questions[:limit])


# --- Loading -------------------------------------------------------------------


def load_dataset(path: Path, data_format: str = "auto") -> Dataset:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"Cannot read {path}: {error}") from error
    if data_format == "auto":
        data_format = detect_format(raw)
    loader = {"squad": squad_dataset, "tatqa": tatqa_dataset}.get(data_format)
    if loader is None:
        raise DatasetError(f"Unknown format {data_format!r}.")
    try:
        passages, questions = loader(raw)
    except (KeyError, TypeError, AttributeError) as error:
        raise DatasetError(f"{path} is not a {data_format} data set.") from error
    if not passages or not questions:
        raise DatasetError(f"{path} holds no passages with questions.")
    if len({passage.key for passage in passages}) != len(passages):
        raise DatasetError(f"{path} names two passages the same.")
    return Dataset(Path(path).name, data_format, tuple(passages), tuple(questions))


def detect_format(raw: object) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("data"), list):
        return "squad"
    if (
        isinstance(raw, list)
        and raw
        and isinstance(raw[0], dict)
        and {"table", "paragraphs", "questions"} <= raw[0].keys()
    ):
        return "tatqa"
    raise DatasetError("Neither SQuAD-style nor TAT-QA; pass --format.")


def squad_dataset(raw: dict) -> tuple[list[EvalPassage], list[EvalQuestion]]:
    passages: list[EvalPassage] = []
    questions: list[EvalQuestion] = []
    for article_index, article in enumerate(raw["data"]):
        for index, paragraph in enumerate(article["paragraphs"]):
            text = paragraph["context"].strip()
            if not text:
                continue
            key = str(paragraph.get("id") or f"{article_index}-{index}")
            passages.append(EvalPassage(key, text, f"{key}.txt", text))
            questions.extend(
                EvalQuestion(qa["question"].strip(), key)
                for qa in paragraph["qas"]
                if qa["question"].strip() and not qa.get("is_impossible")
            )
    return passages, questions


def tatqa_dataset(raw: list) -> tuple[list[EvalPassage], list[EvalQuestion]]:
    passages: list[EvalPassage] = []
    questions: list[EvalQuestion] = []
    for item in raw:
        key = str(item["table"]["uid"])
        rows = [
            [" ".join(str(cell).split()) for cell in row]
            for row in item["table"]["table"]
        ]
        rows = [row for row in rows if any(row)]
        paragraphs = [
            " ".join(p["text"].split())
            for p in sorted(item["paragraphs"], key=lambda p: int(p["order"]))
        ]
        paragraphs = [p for p in paragraphs if p]
        plain = "\n".join(" | ".join(cell for cell in row if cell) for row in rows)
        text = "\n\n".join(part for part in (plain, *paragraphs) if part)
        if not text:
            continue
        passages.append(
            EvalPassage(key, text, f"{key}.md", _markdown(rows, paragraphs))
        )
        questions.extend(
            EvalQuestion(q["question"].strip(), key)
            for q in sorted(item["questions"], key=lambda q: int(q["order"]))
            if q["question"].strip()
        )
    return passages, questions


def _markdown(rows: list[list[str]], paragraphs: list[str]) -> str:
    parts = []
    if rows:
        width = max(len(row) for row in rows)
        lines = [
            "| " + " | ".join(cell.replace("|", r"\|") for cell in row) + " |"
            for row in rows
        ]
        lines.insert(1, "|" + " --- |" * width)
        parts.append("\n".join(lines))
    return "\n\n".join([*parts, *paragraphs]) + "\n"


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
        cells = [list(COLUMNS)]
        for row in self.rows():
            cells.append(
                [
                    str(row["profile"]),
                    *(f"{row[column]:.4f}" for column in COLUMNS[1:5]),
                    f"{row['p50 ms']:.1f}",
                ]
            )
        widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
        return "\n".join(
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in cells
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
        self.dataset = dataset
        self.profiles = list(profiles)
        self.baseline = baseline
        self.keep = keep
        self.write = write
        self.knowledge_base_id = f"eval-{uuid.uuid4().hex[:8]}"
        self.user = None
        self.documents: dict[str, uuid.UUID] = {}  # passage key -> document id

    def run(self) -> Report:
        try:
            started = time.perf_counter()
            self.ingest()
            ingest_seconds = time.perf_counter() - started
            results = [self.evaluate(profile) for profile in self.profiles]
            if self.baseline:
                results.append(self.evaluate_baseline())
            return Report(
                dataset=self.dataset.name,
                format=self.dataset.format,
                passages=len(self.documents),
                chunks=Chunk.objects.filter(
                    knowledge_base_id=self.knowledge_base_id
                ).count(),
                questions=len(self.dataset.questions),
                ingest_seconds=ingest_seconds,
                results=results,
            )
        finally:
            if self.keep:
                self.write(f"kept knowledge base {self.knowledge_base_id}")
            else:
                self.clean_up()

    # --- ingestion through the real path ---

    def ingest(self) -> None:
        kb_id = self.knowledge_base_id
        KnowledgeBase.objects.create(id=kb_id, name=f"Evaluation {self.dataset.name}")
        self.user = get_user_model().objects.create_user(username=kb_id)
        Membership.objects.create(
            user=self.user, knowledge_base_id=kb_id, role=Role.REVIEWER
        )
        passages = self.dataset.passages
        self.write(f"uploading {len(passages)} passages to {kb_id}")
        for passage in passages:
            document = document_upload(
                user=self.user,
                knowledge_base_id=kb_id,
                uploaded_file=ContentFile(
                    passage.content.encode("utf-8"), name=passage.filename
                ),
            )
            self.documents[passage.key] = document.pk
        tasks = [
            document_submit(user=self.user, document_id=document_id).pk
            for document_id in self.documents.values()
        ]
        # One task at a time by id: a worker draining the queue would also run
        # other knowledge bases' tasks waiting in this database.
        worker = Worker(worker_id=f"evaluate-{kb_id}", write=lambda line: None)
        for done, task_id in enumerate(tasks, start=1):
            worker.run(task_id)
            if done % 200 == 0:
                self.write(f"ingested {done}/{len(tasks)}")
        failed = IngestionTask.objects.filter(pk__in=tasks).exclude(
            status=TaskStatus.SUCCEEDED
        )
        if failed.exists():
            codes = sorted(set(failed.values_list("error_code", flat=True)))
            raise EvaluationError(
                f"{failed.count()} passages failed to ingest: {', '.join(codes)}."
            )
        for document_id, lock_version in Document.objects.filter(
            pk__in=self.documents.values(), status=DocumentStatus.REVIEW_PENDING
        ).values_list("pk", "lock_version"):
            document_publish(
                user=self.user,
                document_id=document_id,
                expected_lock_version=lock_version,
            )

    def clean_up(self) -> None:
        kb_id = self.knowledge_base_id
        documents = Document.objects.filter(knowledge_base_id=kb_id)
        keys = list(documents.values_list("storage_key", flat=True))
        document_ids = [str(pk) for pk in documents.values_list("pk", flat=True)]
        with transaction.atomic():
            Chunk.objects.filter(knowledge_base_id=kb_id).delete()
            IngestionTask.objects.filter(document_id__in=document_ids).delete()
            OutboxEvent.objects.filter(payload__document_id__in=document_ids).delete()
            documents.delete()
            KnowledgeBase.objects.filter(pk=kb_id).delete()
            if self.user is not None:
                self.user.delete()
        for key in keys:
            default_storage.delete(key)
        snapshot_cache.discard(kb_id)

    # --- questions ---

    def evaluate(self, profile: str) -> ProfileResult:
        kb_ids = [self.knowledge_base_id]
        result = ProfileResult(profile)
        # Warm up (jieba's dictionary, the snapshot) outside the timings.
        search.search_snapshots(
            snapshot_cache.snapshots(kb_ids), "warm up", top_k=TOP_K, profile=profile
        )
        for question in self.dataset.questions:
            started = time.perf_counter()
            run = search.search_snapshots(
                snapshot_cache.snapshots(kb_ids),
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
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)
        passages = self.dataset.passages
        retriever = bm25s.BM25()
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


_WORD = re.compile(r"\w")


def jieba_words(text: str) -> list[str]:
    """The baseline's tokens: lowercased `jieba.lcut` words, punctuation left out.

    bm25s's own tokenizer drops punctuation too; kept, a "？" in a question
    matches the few passages that hold one, and costs the baseline 5 points of
    recall@1 on CMRC.
    """
    return [word for word in _segmenter().lcut(text.lower()) if _WORD.search(word)]
