"""Which evidence unit answers the question best.

A unit scores the IDF-weighted share of the question's terms it holds plus the
IDF-weighted share of the question's characters and character pairs (Chinese
questions paraphrase; names cut into characters still match), where IDF is over
the units of this answer's sources: the words that set one unit apart from the
others count. A term found only in the unit's context (the sentence before, the
section's first sentence, the heading) counts `CONTEXT_CREDIT` of its weight. A
unit of the kind of answer asked for (a number, a time, a place, an alias) gets a
small bonus. A unit about a sibling of the item the question names ("level 2" for
"level 1") is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from core.text import HAN
from retrieval.lexicon import WIDE_YEAR_DIGITS, en, idf, zh
from retrieval.tokens import normalized, term_runs

from .evidence import Unit
from .question import Question, Term, designators_in, stem

SIBLING_RULE = True
CONTEXT_CREDIT = 0.7
SOURCE_WEIGHT = 1.0
RANK_PENALTY = 0.3
KIND_BONUS = 0.1
# A sentence that says what the thing asked for is ("X is/are ...") outweighs a
# rank of the search (docs/answer-quality.md, step 13).
DEFINITION_BONUS = 0.4
NUMBER_BONUS = 0.15

# What a unit of the kind of answer asked for says (`lexicon`'s kind cues).
_KIND_CUES = {
    "time": re.compile(rf"{zh.TIME_CUE}|\b{WIDE_YEAR_DIGITS}\b|{en.TIME_CUE}", re.I),
    "place": re.compile(rf"{zh.PLACE_CUE}|{en.PLACE_CUE}", re.I),
    "reason": re.compile(rf"{en.REASON_CUE}|{zh.REASON_CUE}", re.I),
    "alias": re.compile(rf"{zh.ALIAS_CUE}|[「“\"《]|{en.ALIAS_CUE}", re.I),
}
_CJK_CHARACTER = re.compile(f"[{HAN}]")
_HAS_NUMBER = re.compile(rf"\d|{zh.NUMERAL_WITH_UNIT}|{en.NUMBER_WORD}", re.IGNORECASE)


class Matcher:
    """What a text holds: CJK terms and characters by substring, words by token."""

    def __init__(self, text: str) -> None:
        self.text = normalized(text)

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(
            stem(term)
            for is_cjk, terms in term_runs(self.text)
            if not is_cjk
            for term in terms
        )

    def has(self, term: Term | str) -> bool:
        text = term.text if isinstance(term, Term) else term
        if text.isascii():
            return text in self.words
        return text in self.text

    def presence(self, term: Term) -> float:
        """1 when the text holds the term; for a long CJK term, the share of its
        character pairs it holds (a name written a little differently), but 0 when
        the text names a sibling: the term's end under another beginning
        ("异齿前肛鳗" for "黑尾前肛鳗")."""
        if self.has(term):
            return 1.0
        if not term.cjk:
            return 1.0 if self.has_misspelt(term.text) else 0.0
        if len(term.text) >= 3:
            if SIBLING_RULE and self.names_sibling_of(term.text):
                return 0.0
            pairs = [term.text[i : i + 2] for i in range(len(term.text) - 1)]
            return sum(pair in self.text for pair in pairs) / len(pairs)
        return 0.0

    def has_misspelt(self, word: str) -> bool:
        """A word of the text that begins like `word` and is about as long: the
        question's "activites" for the text's "activities"."""
        if len(word) < 6:
            return False
        prefix = word[:5]
        return any(
            known.startswith(prefix) and abs(len(known) - len(word)) <= 2
            for known in self.words
        )

    def names_sibling_of(self, name: str) -> bool:
        for start in range(1, len(name) - 1):
            tail = name[start:]
            position = self.text.find(tail)
            if position < 0:
                continue
            while position >= 0:
                before = self.text[position - 1] if position else ""
                if not _CJK_CHARACTER.match(before):
                    return False  # the tail stands alone: a short form of the name
                position = self.text.find(tail, position + 1)
            return True
        return False


@dataclass(frozen=True)
class Scored:
    score: float  # what ranks it: `merit`, less the rank of its source in the search
    unit: Unit
    own: float  # the part of the score that comes from the unit and its context
    merit: float  # `own` and how well its source covers the question


def local_weights(items: Iterable, matchers: Sequence[Matcher]) -> dict:
    """IDF of each item over `matchers` (BM25's form, never negative)."""
    count = len(matchers)
    weights = {}
    for item in items:
        frequency = sum(matcher.has(item) for matcher in matchers)
        weights[item] = idf(count, frequency)
    return weights


def rank_units(
    question: Question,
    units: Sequence[Unit],
    source_coverage: Mapping[str, float] | None = None,
) -> list[Scored]:
    """Units best first, siblings of the item the question names left out.

    `source_coverage` (per source id, 0..1) adds how much of the question the
    unit's source holds, so that a unit is not preferred for the words it shares
    with the question when its source is about something else.
    """
    if not units or not (question.terms or question.grams):
        return []
    own = [Matcher(f"{_term_of(unit)} {unit.text} {unit.header}") for unit in units]
    around = [Matcher(unit.context) for unit in units]
    term_weights = local_weights(question.terms, own)
    gram_weights = local_weights(question.grams, own)
    scored = []
    for unit, inside, outside in zip(units, own, around, strict=True):
        if is_sibling(question, unit):
            continue
        own = _share(term_weights, inside, outside) + _share(
            gram_weights, inside, outside
        )
        cue = _KIND_CUES.get(question.answer_kind or "")
        # The glossary entry of the term asked is its definition wherever the
        # search ranked its passage: sentences only using the term share as much
        # of the question.
        entry = bool(question.defines) and _is_entry_of(question.defines, unit)
        if question.defines:
            own += DEFINITION_BONUS * _defines(question.defines, unit)
        elif question.restates and _defines(question.restates, unit):
            own += DEFINITION_BONUS
        elif cue is not None:
            own += KIND_BONUS * bool(cue.search(unit.quote))
        elif question.asks_number and _HAS_NUMBER.search(unit.quote):
            own += NUMBER_BONUS
        merit = own + SOURCE_WEIGHT * (source_coverage or {}).get(unit.source_id, 0.0)
        penalty = 0.0 if entry else RANK_PENALTY * unit.rank
        scored.append(Scored(merit - penalty, unit, own, merit))
    scored.sort(key=lambda s: (-s.score, s.unit.rank, s.unit.position))
    return scored


def _term_of(unit: Unit) -> str:
    """The term a glossary entry defines, for the entry's first sentence: read
    with it, "A defect in a software or human system ..." is about "Root cause"."""
    return unit.label if unit.label and not unit.before else ""


def _is_entry_of(subject: str, unit: Unit) -> bool:
    term = normalized(_term_of(unit))
    if term == subject:
        return True
    # "总体评价 global assessment": a term may be followed by its translation, in
    # the other script ("Credit risk management" is not the entry of "credit risk").
    rest = term[len(subject) + 1 :]
    return term.startswith(f"{subject} ") and bool(
        _CJK_CHARACTER.search(subject)
    ) != bool(_CJK_CHARACTER.search(rest))


def _defines(subject: str, unit: Unit) -> bool:
    """The sentence says what `subject` is: "X (“XY”) are ...", "X, a ...", or
    it opens the glossary entry of X."""
    if _is_entry_of(subject, unit):
        return True
    quote = normalized(unit.quote)
    at = quote.find(subject)
    # The subject opens the sentence ("(a) The company's X are ...", "In practice, X
    # are ..."): in "Therefore, X is ..." or "... about A versus X is that ..." the
    # sentence says something else.
    if at < 0 or not _OPENS_WITH_SUBJECT.fullmatch(quote[:at]):
        return False
    return bool(_DEFINING.match(quote[at + len(subject) :]))


_OPENS_WITH_SUBJECT = re.compile(
    r"(?:(?:\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]|[•·▪*–-])\s*)?"  # a list's marker
    r"(?:(?:in|as of)\s+[^,]{1,30}(?:,\s*\d{4})?,\s*)?"  # "In 2019, "
    r"(?:(?:the|a|an|its|their|our|this|these|those|such|\S+['’]s)\s+){0,2}"
)
_DEFINING = re.compile(
    r"\s*(?:\([^)]*\)\s*)?(?:is|are|was|were|means|refers to|represents|consists"
    r"|comprises|includes?)\b|\s*,\s*(?:a|an|the)\b"
)


def _share(weights: dict, inside: Matcher, outside: Matcher) -> float:
    total = sum(weights.values())
    if not total:
        return 0.0
    found = sum(
        weight
        if inside.has(item)
        else CONTEXT_CREDIT * weight
        if outside.has(item)
        else 0.0
        for item, weight in weights.items()
    )
    return found / total


def is_sibling(question: Question, unit: Unit) -> bool:
    """The unit (with its context) names a parallel item the question does not
    ("level 2", "2018", "二级"), and not the one it does."""
    if not question.designators:
        return False
    named = set(designators_in(normalized(f"{unit.text} {unit.header} {unit.context}")))
    for wanted in question.designators:
        siblings = {d for d in named if d.head == wanted.head and d != wanted}
        if siblings and wanted not in named:
            return True
    return False
