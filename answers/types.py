"""What the answer modules pass to each other: sources, claims, answers."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Protocol


class RefusalReason(StrEnum):
    NO_EVIDENCE = "no_evidence"
    """Search found no published passage for the question."""
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    """Passages were found, but none answers the question well enough to cite."""
    UNSUPPORTED_CLAIM = "unsupported_claim"
    """The provider's claims were all dropped by the claim checker."""


class Confidence(StrEnum):
    """How sure the answerer is that its claims answer the question asked."""

    HIGH = "high"
    """The evidence names what was asked and says it: a cell of the row and
    column asked, a sentence holding the question's terms and the kind of answer."""
    MEDIUM = "medium"
    """The evidence answers a question like this one; some of its words differ."""
    LOW = "low"
    """The closest passage, quoted as such: it may not answer what was asked."""


@dataclass(frozen=True)
class Section:
    """One chunk of a source, with the heading path and page it comes from."""

    text: str
    heading_path: list[str]
    page: int | None


@dataclass
class Source:
    id: str
    document_id: uuid.UUID | None
    document_version: int
    knowledge_base_id: str
    filename: str
    heading_path: list[str]
    page: int | None
    text: str
    excerpt: str = ""
    sections: list[Section] = field(default_factory=list, repr=False)


class Operation(StrEnum):
    """What a calculation does with its operands, in their order.

    change, percentage_change, difference, ratio and percentage take exactly two
    operands; sum and average two or more; count one or more.
    """

    CHANGE = "change"
    """The last operand minus the first (from the earlier value to the later)."""
    PERCENTAGE_CHANGE = "percentage_change"
    """(last − first) / first × 100."""
    DIFFERENCE = "difference"
    """The first operand minus the second."""
    SUM = "sum"
    """The operands added up."""
    AVERAGE = "average"
    """Their sum divided by how many there are."""
    RATIO = "ratio"
    """The first operand divided by the second."""
    PERCENTAGE = "percentage"
    """The first operand as a percentage of the second."""
    COUNT = "count"
    """How many operands there are (each one an item counted)."""


@dataclass(frozen=True)
class Operand:
    """One number a calculation uses, and where it was read."""

    value: Decimal
    source_id: str
    label: str  # what the number is: "Net revenue, 2019"
    text: str  # the number as the source writes it: "1,250", "(3,990)"


@dataclass(frozen=True)
class Calculation:
    """How a claim's number was computed; `calculator.holds()` recomputes it."""

    operation: Operation
    operands: tuple[Operand, ...]
    result: Decimal
    decimals: int  # the result is rounded half away from zero to this many places

    def renumbered(self, new_ids: Mapping[str, str]) -> Calculation:
        """The same calculation with its operands' source ids renamed, for an
        answer that renumbers its sources (the claim's ids and these must agree)."""
        return replace(
            self,
            operands=tuple(
                replace(
                    operand, source_id=new_ids.get(operand.source_id, operand.source_id)
                )
                for operand in self.operands
            ),
        )


@dataclass
class Claim:
    text: str
    source_ids: list[str]
    # The verbatim source text the claim rests on, when the provider knows it.
    quote: str | None = None
    calculation: Calculation | None = None
    confidence: Confidence = Confidence.MEDIUM
    # The source goes on after this claim (a procedure's further steps).
    more: bool = False


@dataclass
class Answer:
    question: str
    answer: str
    refused: bool
    refusal_reason: RefusalReason | None
    claims: list[Claim]
    sources: list[Source]
    partial: bool
    missing_information: list[str]
    provider: str
    profile: str
    confidence: Confidence | None = None  # None when refused


class TermStatistics(Protocol):
    """How common the search index's tokens are in the knowledge bases searched."""

    @property
    def size(self) -> int:
        """How many published chunks there are."""
        ...

    def frequency(self, token: str) -> int:
        """How many of them hold `token`."""
        ...


class ChatProvider(Protocol):
    name: str

    def draft(
        self,
        question: str,
        sources: Sequence[Source],
        *,
        siblings: Sequence[str] = (),
        statistics: TermStatistics | None = None,
    ) -> tuple[list[Claim], RefusalReason | None]:
        """Claims citing `sources` by id; with none, the reason why.

        `siblings` are the other parts of a split question: evidence for this part
        must be about this part, not about them. `statistics` tell how rare each
        word of the question is among everything the caller may read.
        """
        ...
