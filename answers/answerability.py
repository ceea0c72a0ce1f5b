"""Does the evidence answer the question, or only resemble it?

Refusing because a raw overlap score fell under a line refuses answerable
questions whose wording differs from the document's. Instead the best unit's
source, with the unit's context, is asked three things, each weighing the
question's terms by how rare they are among *everything the caller may read*
(`TermStatistics`, from the search index), not among the few passages found:

1. it covers at least `MIN_COVERAGE` of the question's weight;
2. it holds the question's rarest term (the name of what the question is about:
   a passage about a sibling, "异齿前肛鳗" for "黑尾前肛鳗", holds the common part
   only), unless it covers `FULL_COVERAGE` of the question;
3. it holds every number the question writes ("格利泽518b", "17号线").

And the unit's own paragraph, with its heading and context, must cover
`PARAGRAPH_COVERAGE` of the question (`near_enough`): a long source (a report's
tables and notes) may hold the question's words in paragraphs about other things.

Focus terms ("哪个国家" -> 国家) are left out: the answer is an instance of them.
"""

from __future__ import annotations

from retrieval.lexicon import idf
from retrieval.tokens import normalized

from .evidence import Unit
from .question import Question, Term, has_cjk
from .ranking import Matcher
from .types import Source, TermStatistics

MIN_COVERAGE = 0.4
FULL_COVERAGE = 0.6
RAREST_PRESENCE = 0.5
# Chinese questions paraphrase their evidence more than English ones, whose words
# are matched whole (stemmed).
PARAGRAPH_COVERAGE = {True: MIN_COVERAGE, False: 0.6}


def answerable(
    question: Question,
    source: Source,
    statistics: TermStatistics | None,
    *,
    context: str = "",
    numbers: bool = True,
) -> bool:
    """Whether `source` (with `context`, the chosen unit's) answers `question`.

    `numbers=False` leaves the question's numbers out: a table answer has already
    found its years among the column labels, and "less than 50" names no cell.
    """
    evidence = Matcher(" ".join((source.text, " ".join(source.heading_path), context)))
    if numbers and not _numbers_held(question, evidence.text):
        return False
    terms = question.content_terms
    if not terms:
        return True
    weights = term_weights(question, statistics)
    share = coverage(weights, evidence)
    if share < MIN_COVERAGE:
        return False
    rarest = max(terms, key=lambda term: (weights[term], len(term.text)))
    return share >= FULL_COVERAGE or evidence.presence(rarest) >= RAREST_PRESENCE


def near_enough(
    question: Question, unit: Unit, statistics: TermStatistics | None
) -> bool:
    """Whether the unit's paragraph, with its heading and context, covers the
    question: the answer is said where the question's words are."""
    if not question.content_terms:
        return True
    nearby = Matcher(f"{unit.paragraph or unit.text} {unit.header} {unit.context}")
    share = coverage(term_weights(question, statistics), nearby)
    return share >= PARAGRAPH_COVERAGE[has_cjk(question.text)]


def term_weights(
    question: Question, statistics: TermStatistics | None
) -> dict[Term, float]:
    """The question's content terms weighed by their rarity in the index."""
    return {term: _weight(term, statistics) for term in question.content_terms}


def coverage(weights: dict[Term, float], evidence: Matcher) -> float:
    """The weighted share of the terms `evidence` holds (partly, for a long name
    written a little differently)."""
    total = sum(weights.values())
    if not total:
        return 1.0
    return sum(w * evidence.presence(t) for t, w in weights.items()) / total


def _weight(term: Term, statistics: TermStatistics | None) -> float:
    """IDF among the chunks the caller may read. A term the index does not hold as
    one token (a name cut into characters) is as rare as its rarest token."""
    if statistics is None or not statistics.size:
        return 1.0
    frequencies = [statistics.frequency(token) for token in term.index_tokens] or [0]
    frequency = min(frequencies)
    return idf(statistics.size, frequency)


def _numbers_held(question: Question, text: str) -> bool:
    flat = normalized(text).replace(",", "")
    return all(_whole_number_in(number, flat) for number in question.numbers)


def _whole_number_in(number: str, text: str) -> bool:
    start = text.find(number)
    while start >= 0:
        end = start + len(number)
        before = text[start - 1] if start else ""
        after = text[end : end + 2]
        if not before.isdigit() and not (
            after[:1].isdigit() or (after[:1] == "." and after[1:2].isdigit())
        ):
            return True
        start = text.find(number, start + 1)
    return False
