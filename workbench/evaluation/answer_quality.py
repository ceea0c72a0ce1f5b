"""Answer quality: answered with a gold answer, answered wrongly, or refused?

The `AnswerEvaluator` publishes every other group of a data set (SQuAD article,
TAT-QA item) into a scratch knowledge base through the real ingestion path and asks
every question through `chat_answer`, as a member of that knowledge base. Questions
about a published group are answerable; questions about the others are not, and
must be refused. Scored by `matching` (see its rules); per run, and for TAT-QA per
answer type. A knowledge-base folder (`kb`) publishes every document and asks its
questions as conversations: a follow-up in the conversation of the question it
continues. Its answers are scored by its README's rule (the gold answer held after
NFKC, case-folding and removing whitespace, and the gold file cited), per kind,
language and document format, with the misses listed, wrong answers first.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import IO

from answers.chat import chat_answer
from answers.providers import get_chat_provider
from answers.types import Answer
from conversations.services import conversation_chat

from .datasets import Dataset, EvalQuestion
from .matching import answer_hit, contains
from .report import text_table
from .scratch import ScratchKnowledgeBase

COLUMNS = (
    "slice",
    "answerable",
    "answer-hit",
    "wrong",
    "sure wrong",
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
    kind: str = ""
    language: str = ""
    cited: tuple[str, ...] = ()  # the file names of the sources cited
    confidence: str = ""  # high, medium or low; "" when refused

    @property
    def chars(self) -> int:
        return len(self.answer)

    @property
    def document_format(self) -> str:
        return PurePosixPath(self.passage_key).suffix.lstrip(".").lower()

    @property
    def verdict(self) -> str:
        """hit, wrong or refused (answerable); right (refused) or answered
        (unanswerable)."""
        if self.answerable:
            return "hit" if self.hit else "refused" if self.refused else "wrong"
        return "right" if self.refused else "answered"


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
            # Wrong and not said to be only the closest passage (confidence low).
            "sure wrong": _share(
                not o.refused and not o.hit and o.confidence != "low"
                for o in answerable
            ),
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
        if self.format == "kb":
            slices.extend(self._kb_slices())
        if self.format == "tatqa":
            slices.extend(
                SliceResult(
                    kind, tuple(o for o in self.outcomes if o.answer_type == kind)
                )
                for kind in ANSWER_TYPES
            )
        return slices

    def _kb_slices(self) -> list[SliceResult]:
        """Per kind (an unanswerable question's kind is "unanswerable"), per
        language, and per document format (answerable questions only)."""
        slices = []
        for label, key in (
            ("kind", lambda o: o.kind),
            ("lang", lambda o: o.language),
            ("format", lambda o: o.document_format),
        ):
            values = sorted({key(o) for o in self.outcomes if key(o)})
            slices.extend(
                SliceResult(
                    f"{label} {value}",
                    tuple(o for o in self.outcomes if key(o) == value),
                )
                for value in values
            )
        return slices

    def misses(self) -> list[str]:
        """One line per question not answered right: wrong answers first (the
        worst outcome), then unanswerable ones answered, then refusals."""
        order = ("wrong", "answered", "refused")
        lines = []
        for verdict in order:
            for outcome in self.outcomes:
                if outcome.verdict != verdict:
                    continue
                said = outcome.answer.replace("\n", " ")[:160] or "(refused)"
                gold = " | ".join(outcome.gold) or "(refuse)"
                sure = f" {outcome.confidence}" if outcome.confidence else ""
                lines.append(
                    f"{verdict:8} [{outcome.kind or outcome.answer_type}"
                    f" {outcome.language}{sure}] {outcome.question}\n"
                    f"         gold: {gold}\n         said: {said}"
                )
        return lines

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
        # kb: the conversation of each question asked, for its follow-ups.
        self.conversations: dict[int, uuid.UUID] = {}

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
                    self.ask(
                        question,
                        question.passage_key in answerable_keys,
                        index=done - 1,
                    )
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

    def _converse(self, question: EvalQuestion, index: int) -> Answer:
        """A kb question in a conversation of its own, a follow-up in the
        conversation of the question it continues."""
        result = conversation_chat(
            user=self.scratch.user,
            question=question.text,
            conversation_id=self.conversations.get(question.follows),
            knowledge_base_ids=[self.scratch.id],
            provider=self.provider,
        )
        self.conversations[index] = result.conversation_id
        return result.answer

    def ask(
        self, question: EvalQuestion, answerable: bool, *, index: int = 0
    ) -> Outcome:
        started = time.perf_counter()
        if self.dataset.format == "kb":
            answer = self._converse(question, index)
        else:
            answer = self._chat(question.text)
        milliseconds = (time.perf_counter() - started) * 1000
        claims_text = "\n".join(claim.text for claim in answer.claims)
        cited = tuple(dict.fromkeys(source.filename for source in answer.sources))
        if self.dataset.format == "kb":
            hit = (
                answerable
                and not answer.refused
                and any(contains(claims_text, gold) for gold in question.answers)
                and PurePosixPath(question.passage_key).name in cited
            )
        else:
            hit = (
                answerable
                and not answer.refused
                and answer_hit(
                    claims_text,
                    question.answers,
                    all_of=question.answer_type == "multi-span",
                )
            )
        return Outcome(
            question=question.text,
            passage_key=question.passage_key,
            gold=question.answers,
            answer_type=question.answer_type,
            answerable=answerable,
            refused=answer.refused,
            hit=hit,
            answer="" if answer.refused else answer.answer,
            claims=len(answer.claims),
            milliseconds=milliseconds,
            kind=question.kind,
            language=question.language,
            cited=cited,
            confidence=answer.confidence or "",
        )
