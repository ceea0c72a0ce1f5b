"""The default chat provider: answers with the sources' own words, no network.

1. The question is analysed (`question`): its terms, the item it names, the kind
   of answer it asks for.
2. A question about a table's cells is answered from the table (`table_answers`):
   the cell, labelled by its row and column, or a calculation over cells; a
   cell looked up gives way to a sentence that names clearly more of the
   question (`SENTENCE_MARGIN`).
3. Otherwise the sources are cut into sentences and rows with their context
   (`evidence`) and ranked (`ranking`); a unit about a sibling of the item the
   question names never answers it.
4. The best unit must answer the question, not only resemble it
   (`answerability`); then it and the runners-up that score almost as well (at
   most three claims, `CLAIM_CHARS` in all) become claims citing every source
   they occur in. A sentence whose subject is set by the sentence before it
   ("It must ...") is quoted with that sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from django.conf import settings

from retrieval.lexicon import en, zh
from retrieval.meaning import Meaning, get_meaning, standout
from retrieval.tokens import normalized

from .answerability import answerable, coverage, near_enough, term_weights
from .evidence import Unit, evidence_units, with_notes
from .measures import asked_measures, says_measure, telling
from .procedures import procedure_steps
from .question import Question, analyse, has_cjk
from .quoted import holds_quoted, quoted_terms
from .ranking import Matcher, Scored, rank_units
from .table_answers import TableAnswer, table_claims
from .table_lookup import OPERATION_WORDS
from .types import Claim, Confidence, RefusalReason, Source, TermStatistics

MAX_CLAIMS = 3
# A runner-up is cited only when it scores almost as well as the best unit.
RUNNER_UP_RATIO = 0.85
# The claims of one answer, in characters: an answer may not win by length.
CLAIM_CHARS = 200
# How much more of the question's weight a sentence must name than the labels of
# the table cells looked up, to answer in their place.
SENTENCE_MARGIN = 0.2
# With a model of meaning (`meaning`), the best units found are compared by it:
# one standing out from the others by LOW_STANDOUT answers at low confidence
# when its source covers LOW_SOURCE_COVERAGE of the question's weight although
# the words checks fail (a paraphrase); one passing them and standing out by
# HIGH_STANDOUT answers at high confidence. A unit saying the telling measure
# the question asks ("3 天" for "几天") is evidence too: it answers at low
# confidence standing out by MEASURE_STANDOUT, its source covering
# MEASURE_SOURCE_COVERAGE, a table row as well as a sentence. kb-dev, CMRC and
# TAT-QA dev: docs/answer-quality.md, steps 21 and 26.
MEANING_CANDIDATES = 12
LOW_STANDOUT = 0.03
LOW_SOURCE_COVERAGE = 0.5
HIGH_STANDOUT = 0.1
MEASURE_STANDOUT = 0.01
MEASURE_SOURCE_COVERAGE = 0.3
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
# A number in words: a Chinese numeral ("两层", "一分钟", "三辑"; not one of the
# words a numeral only spells: "一般", "统一", "第一"), or an English number word
# ("no" and "none" say zero: "No significant amounts were reclassified").
_QUANTITY_WORD = re.compile(rf"{zh.QUANTITY_NUMERAL}|{en.QUANTITY_WORD}", re.IGNORECASE)
_NOT_A_NUMBER = re.compile(rf"{en.NOT_A_NUMBER}|{zh.NOT_A_NUMBER}")
_POINTER = re.compile(
    r"\b(?:following|below|as follows|listed|set forth|tables?)\b", re.IGNORECASE
)
# "The following table shows ...": says what a table holds, not what it says.
_INTRODUCES_A_TABLE = re.compile(
    r"(?:the following|the (?:accompanying|below)) (?:tables?|charts?|schedules?)\b"
    r"|the tables? (?:below|above)\b",
    re.IGNORECASE,
)
_ANAPHOR = re.compile(
    r"^(?:it|its|this|that|these|those|they|their|he|she|his|her|such)\b"
    # a consequence of the sentence before: the reason is there
    r"|^(?:therefore|thus|hence|consequently|accordingly|as a result)\b"
    r"|^(?:它们?|其(?![他中实余次])|他们?|她们?|该|此|这(?:个|些|种|项|一|里))",
    re.IGNORECASE,
)


class ExtractiveChat:
    name = "extractive"

    def __init__(self, *, min_score: float, meaning: Meaning | None = None) -> None:
        self.min_score = min_score
        self.meaning = meaning

    @classmethod
    def from_settings(cls) -> ExtractiveChat:
        return cls(min_score=settings.CHAT_MIN_EVIDENCE_SCORE, meaning=get_meaning())

    def draft(
        self,
        question: str,
        sources: Sequence[Source],
        *,
        siblings: Sequence[str] = (),
        statistics: TermStatistics | None = None,
    ) -> tuple[list[Claim], RefusalReason | None]:
        analysed = analyse(question)
        table = table_claims(analysed, sources, statistics)
        if table.claims:
            return self._table_answer(analysed, table, sources, statistics, siblings)
        said, _ = self._sentence_claims(
            analysed,
            sources,
            statistics,
            siblings,
            leads_in=analysed.asks("about-a-table"),
        )
        if not said:
            return [], RefusalReason.INSUFFICIENT_EVIDENCE
        return said, None

    def _table_answer(
        self,
        question: Question,
        table: TableAnswer,
        sources: Sequence[Source],
        statistics: TermStatistics | None,
        siblings: Sequence[str],
    ) -> tuple[list[Claim], RefusalReason | None]:
        """The table's claims, if its source answers the question; for cells
        looked up, a sentence that names clearly more of the question says it
        better ("a valuation allowance of $52.9 million against certain of its
        foreign deferred tax assets" over the row "Valuation allowance")."""
        by_id = {source.id: source for source in sources}
        asked = question.with_focus(OPERATION_WORDS)
        if not answerable(
            asked, by_id[table.claims[0].source_ids[0]], statistics, numbers=False
        ):
            return [], RefusalReason.INSUFFICIENT_EVIDENCE
        if not table.looked_up:
            return table.claims, None
        said, best = self._sentence_claims(question, sources, statistics, siblings)
        # A sentence only close in meaning never takes a looked-up cell's place.
        sure = [claim for claim in said if claim.confidence != Confidence.LOW]
        if sure and _says_more(best, table.claims, asked, statistics):
            return said, None
        return table.claims, None

    def _sentence_claims(
        self,
        question: Question,
        sources: Sequence[Source],
        statistics: TermStatistics | None,
        siblings: Sequence[str],
        *,
        leads_in: bool = True,
    ) -> tuple[list[Claim], Unit | None]:
        """Claims quoting the sentences (and rows) that answer the question best,
        with the best of them; none when the best one does not answer it. Unless
        `leads_in`, a sentence leading into a table answers nothing (only
        questions about the table itself ask what it shows)."""
        by_id = {source.id: source for source in sources}
        units = with_notes(
            [
                unit
                for rank, source in enumerate(sources)
                for unit in evidence_units(source, rank)
            ],
            {source.id: source.document_id for source in sources},
        )
        if question.asks_explanation or question.defines:
            units = [unit for unit in units if not unit.only_numbers]
        weights = term_weights(question, statistics)
        covered = {
            source.id: coverage(
                weights, Matcher(f"{source.text} {' '.join(source.heading_path)}")
            )
            for source in sources
        }
        scored = _about_this_part(
            question, rank_units(question, units, covered), siblings
        )
        if not leads_in:
            scored = [
                candidate for candidate in scored if not _points_ahead(candidate.unit)
            ]
        # Meaning is judged among all the units found, before any is ruled out.
        found = scored[:MEANING_CANDIDATES]
        # "几次", "how often": the answer is a unit saying a quantity of that
        # measure; a term the question quotes is named by the unit.
        measures = asked_measures(question.text)
        quoted = quoted_terms(question.text)
        scored = [
            candidate
            for candidate in scored
            if says_measure(_claim_text(candidate.unit)[0], measures)
            and holds_quoted(_named(candidate.unit), quoted)
        ]
        if not scored or scored[0].own < self.min_score:
            return [], None
        best = scored[0]
        source = by_id[best.unit.source_id]
        confidence = self._confidence(
            question,
            best,
            found,
            answers=answerable(question, source, statistics, context=best.unit.context)
            and near_enough(question, best.unit, statistics),
            covered=covered[source.id],
            measured=telling(measures),
        )
        if confidence is None:
            return [], None
        claims = [
            replace(claim, confidence=confidence)
            for claim in self._claims(question, scored, best, units)
        ]
        if question.asks("asks-procedure"):
            claims = (
                procedure_steps(best.unit, units, confidence, limit=MAX_CLAIMS)
                or claims
            )
        if _asks_quantity(question):
            claims = [claim for claim in claims if _says_quantity(claim.text, question)]
        claims = [claim for claim in claims if says_measure(claim.text, measures)]
        return claims, best.unit

    def _confidence(
        self,
        question: Question,
        best: Scored,
        found: list[Scored],
        *,
        answers: bool,
        covered: float,
        measured: bool,
    ) -> Confidence | None:
        """How sure the best unit answers: the words checks (`answers`) and, with
        a model of meaning, how far the unit stands out from the others `found`.
        None: refuse."""
        stands_out = None
        if self.meaning is not None:
            others = [s.unit.text for s in found if s is not best]
            cosines = self.meaning.cosines(question.text, [best.unit.text, *others])
            stands_out = standout(cosines)
        if answers:
            if stands_out is not None and stands_out >= HIGH_STANDOUT:
                return Confidence.HIGH
            return Confidence.MEDIUM
        # Only a sentence may be the closest passage, and not for a figure to
        # compute: another report's row or sentence of the same kind stands out
        # as readily as this one's.
        if (
            stands_out is not None
            and stands_out >= LOW_STANDOUT
            and covered >= LOW_SOURCE_COVERAGE
            and best.unit.row is None
            and not question.asks("asks-computation")
            and not _about_another_kind(question, best.unit)
        ):
            return Confidence.LOW
        if (
            measured
            and stands_out is not None
            and stands_out >= MEASURE_STANDOUT
            and covered >= MEASURE_SOURCE_COVERAGE
            and not question.asks("asks-computation")
        ):
            return Confidence.LOW
        return None

    def _claims(
        self, question: Question, scored: list[Scored], best: Scored, units: list[Unit]
    ) -> list[Claim]:
        # A runner-up may lose to the best unit by a share of the best one's own
        # score; how well its source covers the question counts in both, where the
        # source ranked in the search does not (two sources may say it both).
        cutoff = best.merit - (1 - RUNNER_UP_RATIO) * best.own
        compounds = _compounds(question, best.unit)
        claims: dict[str, Claim] = {}
        length = 0
        for candidate in scored:
            if len(claims) >= MAX_CLAIMS:
                break
            if candidate.merit < cutoff:
                continue
            if candidate.own < self.min_score:
                continue
            if candidate is not best and _names_a_sibling(candidate.unit, compounds):
                continue
            text, quote = _claim_text(
                candidate.unit, with_items=not question.asks("asks-count")
            )
            if any(quote in known or known in quote for known in claims):
                continue  # one clause, or the sentence it is part of, is enough
            if claims and length + len(text) > CLAIM_CHARS:
                continue
            length += len(text)
            claims[quote] = Claim(
                text=text,
                source_ids=_sources_holding(candidate.unit, units),
                quote=quote,
            )
        return list(claims.values())


def _says_more(
    sentence: Unit,
    cells: list[Claim],
    question: Question,
    statistics: TermStatistics | None,
) -> bool:
    """Whether a sentence names clearly more of the question than the labels of
    the cells looked up; a row, or a sentence that leads into a table or list
    ("... were as follows:"), says nothing by itself."""
    if sentence.row is not None or _leads_in(sentence):
        return False
    weights = term_weights(question, statistics)
    said = coverage(weights, Matcher(f"{sentence.text} {sentence.context}"))
    looked_up = coverage(weights, Matcher(" ".join(claim.text for claim in cells)))
    return said >= looked_up + SENTENCE_MARGIN


def _asks_quantity(question: Question) -> bool:
    """How many, how much; in English also the amount, value, rate asked for
    ("What was the revenue in 2019?"), unless its cause is asked ("What was the
    increase driven by?")."""
    if question.asks("asks-count"):
        return True
    return (
        question.asks_number
        and not question.asks_explanation
        and not has_cjk(question.text)
        and not question.asks("not-a-quantity")
    )


def _says_quantity(text: str, question: Question) -> bool:
    """A number the question does not write (its years are no answer), or a
    number word."""
    numbers = {number.replace(",", "") for number in _DIGITS.findall(text)}
    words = _NOT_A_NUMBER.sub(" ", text)
    return bool(numbers - question.numbers) or bool(_QUANTITY_WORD.search(words))


def _leads_in(unit: Unit) -> bool:
    """A sentence that leads into a table or list ("... were as follows:")
    says what comes next, not the answer."""
    return unit.row is None and unit.quote.rstrip().endswith((":", "："))


def _points_ahead(unit: Unit) -> bool:
    """A sentence that only points at what follows ("The following tables
    summarize ...:", "... are given below:"); one that says something before
    its colon ("The easiest way to try it is the web demo:", "分为六个区域总部
    ……，主要分三类型："), or that leads into a list it is read with, still
    answers."""
    if unit.row is not None or unit.items:
        return False
    if _INTRODUCES_A_TABLE.match(unit.quote):
        return True
    return unit.quote.rstrip().endswith(":") and bool(_POINTER.search(unit.quote))


def _about_this_part(
    question: Question, scored: list[Scored], siblings: Sequence[str]
) -> list[Scored]:
    """A part of a split question is answered only by evidence naming what sets it
    apart from the other parts ("产假", not the "年假" of its sibling part)."""
    if not siblings:
        return scored
    others = {term.text for sibling in siblings for term in analyse(sibling).terms}
    focus = [term for term in question.terms if term.text not in others]
    if not focus:
        return scored
    return [
        candidate
        for candidate in scored
        if any(_unit_matcher(candidate.unit).has(term) for term in focus)
    ]


def _compounds(question: Question, best: Unit) -> list[tuple[str, str]]:
    """Pairs of adjacent question terms that the best unit writes together too
    ("一线" + "城市", "annual" + "leave"): the first says which of several things
    the second is."""
    asked = normalized(question.text)
    written = normalized(best.text)
    found = []
    for first, second in zip(question.terms, question.terms[1:], strict=False):
        if first.cjk != second.cjk:
            continue
        glue = "" if first.cjk else " "
        modifier = (first.written or first.text).lower() + glue
        head = (second.written or second.text).lower()
        if modifier + head in asked and modifier + head in written:
            found.append((modifier, head))
    return found


def _about_another_kind(question: Question, unit: Unit) -> bool:
    """The unit names the head of a pair of words the question writes ("sick
    leave") after another word ("annual leave"), and the question's modifier
    nowhere near: it is about a sibling of what was asked. (Chinese writes no
    word boundary to tell a modifier from a verb before the head.)"""
    asked = normalized(question.text)
    written = normalized(unit.text)
    near = _unit_matcher(unit)
    for first, second in zip(question.terms, question.terms[1:], strict=False):
        if first.cjk or second.cjk or first.focus or near.has(first):
            continue
        modifier = (first.written or first.text).lower()
        head = (second.written or second.text).lower()
        if f"{modifier} {head}" not in asked:
            continue
        other = rf"\b(?!(?:{_FUNCTION_WORDS})\b)[a-z][a-z-]+ {re.escape(head)}\b"
        if re.search(other, written):
            return True
    return False


# Words before a noun that say nothing about which one it is.
_FUNCTION_WORDS = (
    "the|a|an|of|for|to|and|or|your|our|their|its|this|that|these|those|any|all"
    "|each|every|some|no|per|by|in|on|at|with|from|paid|unpaid|total|more|less"
)


def _names_a_sibling(unit: Unit, compounds: list[tuple[str, str]]) -> bool:
    """The unit names the thing without the word that says which one is asked
    for ("其他城市" where "一线城市" was asked): it is about a sibling."""
    text = normalized(unit.text)
    return any(
        head in text and modifier + head not in text for modifier, head in compounds
    )


def _unit_matcher(unit: Unit) -> Matcher:
    return Matcher(f"{unit.text} {unit.header} {unit.context}")


def _named(unit: Unit) -> str:
    """What a unit names: its text, its section's headings and its term."""
    return f"{unit.text} {unit.heading} {unit.label}"


def _claim_text(unit: Unit, *, with_items: bool = True) -> tuple[str, str]:
    """(what the claim says, what it quotes): a sentence whose subject is set by
    the sentence before it is quoted with that sentence."""
    if (
        unit.before
        and unit.row is None
        and (unit.continues or _ANAPHOR.match(unit.quote))
    ):
        joined = _joined(unit)
        return joined, joined
    if unit.items and with_items:
        return _with_items(unit.text, unit.items), unit.quote
    return unit.text, unit.quote


def _joined(unit: Unit) -> str:
    """The sentence before and the unit, as their paragraph writes them."""
    for glue in (" ", ""):
        joined = f"{unit.before}{glue}{unit.quote}"
        if joined in unit.paragraph:
            return joined
    cjk = has_cjk(unit.before[-1:]) or has_cjk(unit.quote[:1])
    return f"{unit.before}{'' if cjk else ' '}{unit.quote}"


def _with_items(text: str, items: Sequence[str]) -> str:
    """A sentence and the items of the list it leads into, as many as fit in
    `CLAIM_CHARS`."""
    glue = "；" if has_cjk(text) else "; "
    kept: list[str] = []
    for item in items:
        item = item.rstrip(";；,，。. ")
        if len(text) + 1 + len(glue.join([*kept, item])) > CLAIM_CHARS:
            break
        kept.append(item)
    return f"{text} {glue.join(kept)}" if kept else text


def _sources_holding(unit: Unit, units: list[Unit]) -> list[str]:
    """Every source in which the unit's quote occurs, in source order."""
    ids = [other.source_id for other in units if other.quote == unit.quote]
    return list(dict.fromkeys([unit.source_id, *ids]))
