"""Answer quality: answered with a gold answer, answered wrongly, or refused?

The `AnswerEvaluator` publishes every other group of a data set (SQuAD article,
TAT-QA item) into a scratch knowledge base through the real ingestion path and asks
every question through `chat_answer`, as a member of that knowledge base. Questions
about a published group are answerable; questions about the others are not, and
must be refused. Scored by `matching` (see its rules); per run, and for TAT-QA per
answer type.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import IO

from retrieval.answers.chat import chat_answer
from retrieval.answers.providers import get_chat_provider

from .datasets import Dataset, EvalQuestion
from .matching import answer_hit
from .report import text_table
from .scratch import ScratchKnowledgeBase

COLUMNS = (
    "slice",
    "answerable",
    "answer-hit",
    "wrong",
    "refused-answerable",
    "unanswerable",
    "refused-unanswerable",
    "median chars",
    "max claims",
    "p50 ms",
    "p95 ms",
)
ANSWER_TYPES = ("span", "multi-span", "arithmetic", "count")


@dataclass(frozen=True)
class Outcome:
    question: str
    passage_key: str
    gold: tuple[str, ...]
    answer_type: str
    answerable: bool
    refused: bool
    hit: bool
    answer: str
    claims: int
    milliseconds: float

    @property
    def chars(self) -> int:
        return len(self.answer)


@dataclass(frozen=True)
class SliceResult:
    """The scores of some outcomes (all of a run, or one answer type)."""

    name: str
    outcomes: tuple[Outcome, ...]

    def row(self) -> dict[str, str | int | float | None]:
        answerable = [o for o in self.outcomes if o.answerable]
        unanswerable = [o for o in self.outcomes if not o.answerable]
        answered = [o for o in self.outcomes if not o.refused]
        latencies = sorted(o.milliseconds for o in self.outcomes)
        return {
            "slice": self.name,
            "answerable": len(answerable),
            "answer-hit": _share(o.hit for o in answerable),
            "wrong": _share(not o.refused and not o.hit for o in answerable),
            "refused-answerable": _share(o.refused for o in answerable),
            "unanswerable": len(unanswerable),
            "refused-unanswerable": _share(o.refused for o in unanswerable),
            "median chars": statistics.median(o.chars for o in answered)
            if answered
            else 0,
            "max claims": max((o.claims for o in self.outcomes), default=0),
            "p50 ms": round(_percentile(latencies, 0.50), 1),
            "p95 ms": round(_percentile(latencies, 0.95), 1),
        }


def _share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return round(sum(flags) / len(flags), 4) if flags else None


def _percentile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class AnswerReport:
    dataset: str
    format: str
    provider: str
    published: int
    held_out: int
    chunks: int
    ingest_seconds: float
    outcomes: list[Outcome]

    def slices(self) -> list[SliceResult]:
        slices = [SliceResult("all", tuple(self.outcomes))]
        if self.format == "tatqa":
            slices.extend(
                SliceResult(
                    kind, tuple(o for o in self.outcomes if o.answer_type == kind)
                )
                for kind in ANSWER_TYPES
            )
        return slices

    def as_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "format": self.format,
            "provider": self.provider,
            "passages_published": self.published,
            "passages_held_out": self.held_out,
            "chunks": self.chunks,
            "ingest_seconds": round(self.ingest_seconds, 1),
            "rows": [result.row() for result in self.slices()],
        }

    def table(self) -> str:
        def cell(value: object) -> str:
            if value is None:
                return "-"
            return f"{value:.4f}" if isinstance(value, float) else str(value)

        rows = [result.row() for result in self.slices()]
        for row in rows:
            row["p50 ms"] = f"{row['p50 ms']:.1f}"
            row["p95 ms"] = f"{row['p95 ms']:.1f}"
            row["median chars"] = f"{row['median chars']:g}"
        return text_table(
            COLUMNS, [[cell(row[column]) for column in COLUMNS] for row in rows]
        )

    def write_details(self, stream: IO[str]) -> None:
        """One JSON object per question, for reading what went wrong."""
        for outcome in self.outcomes:
            stream.write(json.dumps(asdict(outcome), ensure_ascii=False) + "\n")


def published_groups(dataset: Dataset) -> set[int]:
    """Every other group, in the order of the file: the first, third, ..."""
    groups = list(dict.fromkeys(passage.group for passage in dataset.passages))
    return set(groups[::2])


class AnswerEvaluator:
    """Publish half of a data set, ask all of its questions, score the answers."""

    def __init__(
        self,
        dataset: Dataset,
        *,
        provider: str | None = None,
        keep: bool = False,
        write: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.dataset = dataset
        self.provider = get_chat_provider(provider)
        self.keep = keep
        self.write = write
        self.scratch = ScratchKnowledgeBase(dataset.name, write=write)

    def run(self) -> AnswerReport:
        groups = published_groups(self.dataset)
        published = [p for p in self.dataset.passages if p.group in groups]
        answerable_keys = {passage.key for passage in published}
        try:
            started = time.perf_counter()
            self.scratch.ingest(published)
            ingest_seconds = time.perf_counter() - started
            self._warm_up()
            outcomes = []
            for done, question in enumerate(self.dataset.questions, start=1):
                outcomes.append(
                    self.ask(question, question.passage_key in answerable_keys)
                )
                if done % 500 == 0:
                    self.write(f"asked {done}/{len(self.dataset.questions)}")
            return AnswerReport(
                dataset=self.dataset.name,
                format=self.dataset.format,
                provider=self.provider.name,
                published=len(published),
                held_out=len(self.dataset.passages) - len(published),
                chunks=self.scratch.chunk_count(),
                ingest_seconds=ingest_seconds,
                outcomes=outcomes,
            )
        finally:
            if self.keep:
                self.write(f"kept knowledge base {self.scratch.id}")
            else:
                self.scratch.clean_up()

    def _warm_up(self) -> None:
        """jieba's dictionary and the snapshot load outside the timings."""
        self._chat("warm up")

    def _chat(self, question: str):
        return chat_answer(
            user=self.scratch.user,
            question=question,
            knowledge_base_ids=[self.scratch.id],
            provider=self.provider,
        )

    def ask(self, question: EvalQuestion, answerable: bool) -> Outcome:
        started = time.perf_counter()
        answer = self._chat(question.text)
        milliseconds = (time.perf_counter() - started) * 1000
        claims_text = "\n".join(claim.text for claim in answer.claims)
        return Outcome(
            question=question.text,
            passage_key=question.passage_key,
            gold=question.answers,
            answer_type=question.answer_type,
            answerable=answerable,
            refused=answer.refused,
            hit=answerable
            and not answer.refused
            and answer_hit(
                claims_text,
                question.answers,
                all_of=question.answer_type == "multi-span",
            ),
            answer="" if answer.refused else answer.answer,
            claims=len(answer.claims),
            milliseconds=milliseconds,
        )
