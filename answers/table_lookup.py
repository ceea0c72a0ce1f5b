"""Which row and which columns of a table a question names.

A row is named by its label, or its label with its section's ("Change in benefit
obligation Service cost"): the IDF-weighted share of the label's words the
question holds must reach `MIN_LABEL_SHARE`, and of the question's own words
(apart from the operation and the years) that the label, its section and the
table's caption hold, `MIN_QUESTION_SHARE`; and a run of the question's naming
words that the label has a word of must be held whole by the row and the table's
labels ("Transportation" is not "Transportation equipment"). Columns are named
by their years, or by the other words of their labels. A table without a year the
question names is not read for it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from retrieval.lexicon import ANSWER_STOPWORDS, YEAR, YEAR_DIGITS, idf
from retrieval.tokens import normalized, term_runs

from .calculator import parse_number
from .evidence import tables_of
from .question import Question, Term, analyse, has_cjk, stem
from .ranking import Matcher
from .tables import Row, Table, with_full_year
from .types import Operand, Source, TermStatistics

# How clearly a question must name a row: the share of the label it names, and
# the share of its own words (apart from the operation and the years) in the label.
MIN_LABEL_SHARE = 0.8
MIN_QUESTION_SHARE = 0.5

AVERAGE = re.compile(r"\b(?:average|mean)\b|平均", re.I)
SUM = re.compile(
    r"\b(?:total|sum|combined|altogether|aggregate)\b|总和|合计|总共", re.I
)
# Words that say what to do, not which row: left out when rows are matched.
_OPERATION_TEXT = (
    "change increase decrease percentage percent growth average mean total sum "
    "difference ratio proportion share amount value year years respective "
    "respectively between from both combined period fiscal fy highest largest "
    "greatest most higher larger greater more bigger lowest smallest least lower "
    "smaller less exceed exceeded below above under over than across all each every "
    "thousand thousands million millions billion billions"
)
OPERATION_WORDS = frozenset(stem(word) for word in _OPERATION_TEXT.split())
_YEAR_SPAN = re.compile(
    rf"(?<!\d)({YEAR_DIGITS})\s*(?:-|–|to|through|until)\s*({YEAR_DIGITS})(?!\d)"
)
_EVERY_YEAR = re.compile(
    r"\b(?:all|each of the|every|across the|over the)\s+(?:\w+\s+)?(?:years|periods)\b"
    r"|各年|历年",
    re.I,
)


@dataclass(frozen=True)
class Match:
    source: Source
    table: Table
    row: Row
    score: float


def best_row(
    question: Question,
    tables: list[tuple[Source, Table]],
    statistics: TermStatistics | None,
) -> Match | None:
    wanted = [term for term in question.terms if term.text not in OPERATION_WORDS]
    if not wanted:
        return None
    asked = Matcher(question.text)
    phrases = _phrases(question.text)
    best: Match | None = None
    best_key = (0.0, 0.0, False)
    for source, table in tables:
        sections = Counter(row.section for row in table.rows)
        # What the document is called and where the table stands in it: a
        # question names them ("In the OWASP Top Ten release comparison, ...").
        around = f"{_title(source.filename)} {' '.join(source.heading_path)}"
        for row in table.rows:
            # Whichever name of the row the question names best.
            for label in _names(row, sections):
                if not label:
                    continue
                context = (
                    f"{label} {row.section} {table.columns[0]} {table.caption} {around}"
                )
                score = _label_score(label, context, wanted, asked, statistics)
                if score is not None and not _names_whole(
                    phrases, label, f"{context} {' '.join(table.columns)}"
                ):
                    continue
                if score is None or (best is not None and score < best.score):
                    continue
                # Equal names: the label that also holds the question's other
                # words ("Total Americas" over "Americas"), then the one it
                # writes word for word, is the one asked for.
                key = (
                    score,
                    weighted_share(question.terms, Matcher(label), statistics),
                    normalized(label) in normalized(question.text),
                )
                if best is None or key > best_key:
                    best, best_key = Match(source, table, row, score), key
    return best


# "Apple Inc. (“Apple”)": the name a document defines for what it writes in full.
_DEFINED_NAME = re.compile(r"\(\s*(?:the\s+)?[“\"']([^”\"']+)[”\"']\s*\)")


def _title(filename: str) -> str:
    """A file's name as words: "OWASP_Top_Ten_-_Comparison.docx" -> "OWASP Top
    Ten - Comparison"."""
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    return re.sub(r"[_+]+", " ", stem)


# "(XSS)", "[CWE-918]": an abbreviation or code a label adds in brackets names
# the same row ("Net income (loss)" says more than "Net income").
_BRACKETED = re.compile(r"\s*(?:\([^()a-z]*\)|\[[^\[\]a-z]*\])")


def _names(row: Row, sections: Counter) -> list[str]:
    """The row's own label; with its section's ("Change in benefit obligation
    Service cost"); the short name its label defines; the label without what it
    adds in brackets ("Cross Site Scripting (XSS)"); its section's alone when the
    row is the only one of it ("Sales:" over "Product sales to affiliates")."""
    names = [row.cells[0], row.label]
    defined = _DEFINED_NAME.search(row.cells[0])
    if defined:
        names.append(defined.group(1))
    unbracketed = _BRACKETED.sub("", row.cells[0]).strip()
    if unbracketed and unbracketed != row.cells[0]:
        names.append(unbracketed)
    if row.section and sections[row.section] == 1:
        names.append(row.section)
    return [name for name in dict.fromkeys(names) if name]


# Closed-class words that end a name without being function words elsewhere.
_PHRASE_BREAK_TEXT = (
    "against along among around after before beside besides beyond despite during "
    "except including excluding like near since through throughout toward towards "
    "until upon via within without certain such"
)
_PHRASE_BREAKS = frozenset(_PHRASE_BREAK_TEXT.split())


def _phrases(text: str) -> list[frozenset[str]]:
    """The runs of words that name things in a question, stemmed: split at
    function and operation words, numbers, possessives, CJK and a participle
    after a name ("the change in Transportation equipment in 2019" ->
    {transportation, equipment}; "the revenue recognized" -> {revenue}; "deferred
    revenue" stays whole)."""
    phrases: list[frozenset[str]] = []
    for is_cjk, terms in term_runs(text):
        run: list[str] = []
        for word in [*([] if is_cjk else terms), ""]:
            folded = stem(word)
            if (
                not word.isalpha()  # also a possessive, a number, the end
                or word in ANSWER_STOPWORDS
                or word in _PHRASE_BREAKS
                or folded in OPERATION_WORDS
                or (run and word.endswith(("ed", "ing")))
            ):
                if run:
                    phrases.append(frozenset(run))
                run = []
            else:
                run.append(folded)
    return phrases


def _names_whole(phrases: list[frozenset[str]], label: str, context: str) -> bool:
    """Whether every phrase of the question that the label names a word of is
    held whole by the row's label, section, the table's column labels and
    caption: a row "Transportation" does not answer for "Transportation
    equipment"; "domestic discount rate" may name a column "Domestic 2019"."""
    named = Matcher(label).words
    held = Matcher(context).words
    return all(phrase <= held for phrase in phrases if phrase & named)


def _label_score(
    label: str,
    context: str,
    wanted: list[Term],
    asked: Matcher,
    statistics: TermStatistics | None,
) -> float | None:
    """How clearly the question names a row: the share of its label the question
    holds, and of the question the label holds with its section and caption."""
    label_terms = [
        term
        for term in analyse(label).terms
        if term.text not in OPERATION_WORDS or asked.has(term)
    ]
    if not label_terms:
        return None
    label_share = weighted_share(label_terms, asked, statistics)
    question_share = weighted_share(wanted, Matcher(context), statistics)
    if label_share < MIN_LABEL_SHARE or question_share < MIN_QUESTION_SHARE:
        return None
    return 2 * label_share * question_share / (label_share + question_share)


def weighted_share(
    terms: Sequence[Term], text: Matcher, statistics: TermStatistics | None
) -> float:
    weights = {term: _weight(term, statistics) for term in terms}
    total = sum(weights.values())
    if not total:
        return 0.0
    return sum(w for term, w in weights.items() if text.has(term)) / total


def _weight(term: Term, statistics: TermStatistics | None) -> float:
    if statistics is None or not statistics.size:
        return 1.0
    frequency = min(
        (statistics.frequency(token) for token in term.index_tokens), default=0
    )
    return idf(statistics.size, frequency)


def numeric(row: Row, column: int) -> Decimal | None:
    return parse_number(row.value(column))


_WORD = re.compile(r"\w")


def columns_asked(
    question: Question, table: Table, row: Row, *, words: bool = False
) -> list[int] | None:
    """The value columns the question names, in the order it names them: by year,
    else by the words of their labels; a table with one value column has it.
    None when the question names a year the table has no column for. Cells of
    words ("A1", "mpm_winnt") count only when nothing is computed (`words`)."""
    text = normalized(question.text)
    valued = [
        c
        for c in table.value_columns
        if numeric(row, c) is not None or (words and _WORD.search(row.value(c)))
    ]
    chosen: list[int] = []
    years = years_asked(text)
    if (
        not years
        and _EVERY_YEAR.search(text)
        and (AVERAGE.search(text) or SUM.search(text))
    ):
        # "the total across all 3 years": every year the row has.
        return [c for c in valued if YEAR.search(table.columns[c])]
    for year in years:
        columns = [c for c in valued if year in table.columns[c]]
        if not columns:
            return None  # a year the table does not have: not this table's row
        chosen.append(_closest_label(columns, table, text))
    if chosen:
        return list(dict.fromkeys(chosen))
    named = [
        c
        for c in valued
        if table.columns[c]
        and not YEAR.search(table.columns[c])
        and Matcher(question.text).has(normalized(table.columns[c]))
    ]
    if named:
        return named
    return valued if len(valued) == 1 else []


def years_asked(text: str) -> list[str]:
    """The years the question names, in its order; every year of a span it
    sums or averages ("the average from 2017 to 2019")."""
    years = YEAR.findall(with_full_year(text))
    span = _YEAR_SPAN.search(text)
    if span and (AVERAGE.search(text) or SUM.search(text)):
        first, last = sorted(int(year) for year in span.groups())
        years = [str(year) for year in range(last, first - 1, -1)]
    return years


def tables_for(text: str, sources: Sequence[Source]) -> list[tuple[Source, Table]]:
    """The tables of `sources` with rows and every year `text` names."""
    tables = [(source, table) for source in sources for table in tables_of(source)]
    # A table without a year the question names is about other periods.
    years = years_asked(text)
    return [
        (source, table)
        for source, table in tables
        if table.rows and has_years(table, years)
    ]


def has_years(table: Table, years: list[str]) -> bool:
    """Whether the table's column labels, or its row labels where the columns
    name no year ("Net balances at September 30, 2018" by segment), hold
    `years`."""
    labels = " ".join(table.columns)
    if not YEAR.search(labels):
        labels = " ".join(row.label for row in table.rows)
    return all(year in labels for year in years)


def names_a_column(text: str, table: Table) -> bool:
    asked = Matcher(text)
    return any(
        year in text or asked.has(normalized(label))
        for label in table.columns[1:]
        if label
        for year in YEAR.findall(label) or [label]
    )


def _closest_label(columns: list[int], table: Table, text: str) -> int:
    """Of columns sharing a year ("Financial assets 2019", "Financial liabilities
    2019"), the one whose label holds the most of the question's words, else the
    first."""
    asked = Matcher(text)

    def held(column: int) -> int:
        return sum(
            asked.has(word)
            for word in analyse(table.columns[column]).terms
            if not YEAR.fullmatch(word.text)
        )

    return max(columns, key=held)


def ordered_by_time(table: Table, columns: list[int]) -> list[int]:
    """Earlier first when the labels say years; as asked otherwise."""
    years = [YEAR.search(table.columns[c]) for c in columns]
    if all(years):
        return sorted(columns, key=lambda c: YEAR.search(table.columns[c]).group())
    return columns


def previous_year_column(table: Table, row: Row, column: int) -> int | None:
    match = YEAR.search(table.columns[column])
    if match is None:
        return None
    earlier = str(int(match.group()) - 1)
    for other in table.value_columns:
        if earlier in table.columns[other] and numeric(row, other) is not None:
            return other
    return None


def with_previous_year(table: Table, row: Row, columns: list[int]) -> list[int]:
    """One column asked for with the year before it ([] without one); more
    columns as they are."""
    if len(columns) == 1:
        previous = previous_year_column(table, row, columns[0])
        return [previous, columns[0]] if previous is not None else []
    return columns


def every_year_column(table: Table, row: Row) -> list[int]:
    """Every year of the row; not the percentages beside its amounts."""
    return [
        c
        for c in table.value_columns
        if numeric(row, c) is not None
        and YEAR.search(table.columns[c])
        and "%" not in row.value(c)
    ]


def operand(match: Match, row: Row, column: int) -> Operand:
    """The cell as an operand of a calculation, labelled by its row and column."""
    return Operand(
        value=numeric(row, column),
        source_id=match.source.id,
        label=cell_label(match.table, row, column),
        text=row.value(column),
    )


def cell_label(table: Table, row: Row, column: int) -> str:
    name = table.columns[column] if column < len(table.columns) else ""
    comma = "，" if has_cjk(row.label + name) else ", "
    return f"{row.label}{comma}{name}" if name else row.label
