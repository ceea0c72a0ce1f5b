"""The default chat provider: answers with the sources' own sentences, no network.

Each source is cut into evidence units: sentences (at 。！？.!? and line ends) and
table rows (`a | b | c` lines from our parsers). Headings and table header rows are
context, never evidence. A unit scores the IDF-weighted share of the question's
keywords it contains (keywords found only in its heading path count half; a row
also matches through its table header), plus a bonus when the question asks for a
number and the unit has one. The best one to three units above
`CHAT_MIN_EVIDENCE_SCORE` become claims citing every source they occur in.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.conf import settings

from ..tokens import iter_terms, keyword_tokens
from .types import Claim, RefusalReason, Section, Source

MAX_CLAIMS = 3
# A runner-up is cited only when it scores almost as well as the best unit.
RUNNER_UP_RATIO = 0.85
NUMBER_BONUS = 0.15
HEADING_CREDIT = 0.5

_STOPWORD_TEXT = (
    # Chinese question and function words.
    "多少 什么 是 的 吗 呢 吧 啊 了 哪些 哪个 哪里 如何 怎么 怎样 怎么样 几 有 没有 "
    "请问 请 一下 是否 能否 可以 能 会 要 为 在 和 与 及 或 分别 多久 多长 对 把 被 "
    "我 我们 你 你们 他 她 它 这 那 这个 那个 其 之 所 以 于 "
    # English question and function words.
    "a an the what which who whom whose when where why how is are was were be been "
    "do does did of for in on to at by from with as and or per many much long "
    "can could should would will i we you our my your it its this that these those "
    "there their get gets have has had please tell me about any"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_ASKS_NUMBER = re.compile(
    r"多少|几|多久|多长|多大|多高|多远|多重|哪一?年|何时|什么时候|百分之|百分比|比例|比率"
    r"|\bhow\s+(?:many|much|long|often|old|far|big|large|high)\b"
    r"|\bwhen\b|\bwhat\s+(?:year|date|time|percentage|percent|share|rate|amount|number)\b"
    r"|\bwhich\s+year\b",
    re.IGNORECASE,
)
_HAS_NUMBER = re.compile(
    r"\d|[零一二两三四五六七八九十百千万亿]+(?:[天元年月日个次人倍岁周%]|小时)"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
    r"thirty|forty|fifty|hundred|thousand)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(
    r"[^。！？!?\n]+?(?:[。！？!?]+[”’」』）)\"']*|\.(?=\s|$)[”’\"')]*|$)|[^。！？!?\n]+"
)
# "几天", "多少钱": a question word with its unit, not a keyword.
_QUESTION_WORD = re.compile(r"^(?:几|多少|哪|什么)")
_WORD = re.compile(r"\w")
_ROW_SEPARATOR = " | "
_YEAR = re.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class Unit:
    """One piece of evidence: a sentence or a table row of one source."""

    source_id: str
    quote: str
    text: str  # what the claim says: the quote, a row labelled by its header
    context: str  # matched as if it were part of the unit (a row's table header)
    heading: str

    @property
    def full_text(self) -> str:
        return f"{self.text} {self.context} {self.heading}"


class ExtractiveChat:
    name = "extractive"

    def __init__(self, *, min_score: float) -> None:
        self.min_score = min_score

    @classmethod
    def from_settings(cls) -> ExtractiveChat:
        return cls(min_score=settings.CHAT_MIN_EVIDENCE_SCORE)

    def draft(
        self, question: str, sources: Sequence[Source], *, siblings: Sequence[str] = ()
    ) -> tuple[list[Claim], RefusalReason | None]:
        units = [unit for source in sources for unit in evidence_units(source)]
        scored = score_units(question, units)
        # A part of a split question is answered only by evidence naming what sets
        # it apart ("产假", not the "年假" of its sibling part).
        focus = set(question_terms(question)).difference(
            *(question_terms(sibling) for sibling in siblings)
        )
        if siblings and focus:
            scored = [
                (score, unit)
                for score, unit in scored
                if any(_Matcher(unit.full_text).has(term) for term in focus)
            ]
        best = scored[0][0] if scored else 0.0
        if best < self.min_score:
            return [], RefusalReason.INSUFFICIENT_EVIDENCE
        cutoff = max(self.min_score, best * RUNNER_UP_RATIO)
        claims: dict[str, Claim] = {}
        for score, unit in scored:
            if score < cutoff:
                break
            claim = claims.get(unit.quote)
            if claim is not None:
                if unit.source_id not in claim.source_ids:
                    claim.source_ids.append(unit.source_id)
            elif len(claims) < MAX_CLAIMS:
                claims[unit.quote] = Claim(
                    text=unit.text, source_ids=[unit.source_id], quote=unit.quote
                )
        return list(claims.values()), None


def evidence_units(source: Source) -> Iterator[Unit]:
    """Sentences and rows of each section of `source` that the source text holds."""
    seen: set[str] = set()
    sections = source.sections or [
        Section(source.text, source.heading_path, source.page)
    ]
    for section in sections:
        for unit in _section_units(source.id, section):
            # Overlapping chunks repeat sentences; a clipped source lacks its tail.
            if unit.quote not in seen and unit.quote in source.text:
                seen.add(unit.quote)
                yield unit


def _section_units(source_id: str, section: Section) -> Iterator[Unit]:
    headings = {_normal(title) for title in section.heading_path}
    heading = " ".join(section.heading_path)
    rows: list[str] = []

    def table() -> Iterator[Unit]:
        yield from _row_units(source_id, rows, heading)
        rows.clear()

    for raw_line in section.text.split("\n"):
        line = raw_line.strip()
        if not line:
            continue  # blank lines separate blocks, also rows of one table
        if _ROW_SEPARATOR in line:
            rows.append(line)
            continue
        yield from table()
        if _normal(line) in headings:
            continue
        for match in _SENTENCE.finditer(line):
            sentence = match.group().strip()
            if _is_evidence(sentence) and _normal(sentence) not in headings:
                yield Unit(source_id, sentence, sentence, "", heading)
    yield from table()


def _row_units(source_id: str, rows: list[str], heading: str) -> Iterator[Unit]:
    """Data rows of one table; its header row labels them and is not evidence."""
    if not rows:
        return
    cells = [[cell.strip() for cell in row.split("|")] for row in rows]
    header: list[str] | None = None
    if len(rows) > 1 and _looks_like_header(cells[0], cells[1:]):
        header = cells[0]
    for row, row_cells in zip(rows, cells, strict=True):
        if header is not None and (row_cells is cells[0] or row_cells == header):
            continue
        text = row
        if header is not None and len(header) == len(row_cells):
            cjk = bool(re.search(r"[\u3400-\u9fff]", row + " ".join(header)))
            label, glue = ("：", "；") if cjk else (": ", "; ")
            text = glue.join(
                f"{name}{label}{value}"
                for name, value in zip(header, row_cells, strict=True)
            )
        yield Unit(source_id, row, text, " ".join(header or []), heading)


def _looks_like_header(first: list[str], others: list[list[str]]) -> bool:
    """A first row without numbers (or with only years) over rows that have them.

    A chunk may start in the middle of a table; its first row is then data, which
    shows as numbers like those of the rows below.
    """
    numbers = [n for cell in first for n in re.findall(r"\d+(?:\.\d+)?", cell)]
    if not numbers:
        return True
    others_have_numbers = any(re.search(r"\d", " ".join(row)) for row in others)
    return others_have_numbers and all(_YEAR.match(n) for n in numbers)


def _is_evidence(sentence: str) -> bool:
    """Not a fragment: some words, or at least a number."""
    terms = [term for _, term in iter_terms(sentence)]
    return bool(terms) and (len(sentence) >= 6 or bool(_HAS_NUMBER.search(sentence)))


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split()).strip(" :：")


def _stem(word: str) -> str:
    """A crude plural fold for English ("days" matches "day")."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def question_terms(question: str) -> list[str]:
    """The question's keywords: jieba words and English words minus stopwords.

    jieba leaves words missing from its dictionary as single characters ("年假" is
    "年", "假"); runs of those are joined back into one term.
    """
    terms: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            terms.append("".join(run))
            run.clear()

    for token in keyword_tokens(question):
        if (
            token in _STOPWORDS
            or _QUESTION_WORD.match(token)
            or not _WORD.search(token)
        ):
            flush()
        elif len(token) == 1 and not token.isascii():
            run.append(token)
        else:
            flush()
            terms.append(_stem(token) if token.isascii() else token)
    flush()
    meaningful = [t for t in terms if len(t) > 1 or t.isascii()]
    return list(dict.fromkeys(meaningful or terms))


class _Matcher:
    """Which question terms a text holds: CJK by substring, words by token."""

    def __init__(self, text: str) -> None:
        self.text = _normal(text)
        self.words = {_stem(term) for is_cjk, term in iter_terms(text) if not is_cjk}

    def has(self, term: str) -> bool:
        return term in self.words if term.isascii() else term in self.text


def score_units(question: str, units: Sequence[Unit]) -> list[tuple[float, Unit]]:
    """(score, unit) best first; scores are 0..1 plus the number bonus."""
    terms = question_terms(question)
    if not terms or not units:
        return []
    matchers = [_Matcher(f"{unit.text} {unit.context}") for unit in units]
    headings = [_Matcher(unit.heading) for unit in units]
    count = len(units)
    weights = {}
    for term in terms:
        frequency = sum(matcher.has(term) for matcher in matchers)
        weights[term] = math.log1p((count - frequency + 0.5) / (frequency + 0.5))
    total = sum(weights.values()) or 1.0
    asks_number = bool(_ASKS_NUMBER.search(question))
    scored = []
    for index, unit in enumerate(units):
        found = sum(
            weight
            if matchers[index].has(term)
            else HEADING_CREDIT * weight
            if headings[index].has(term)
            else 0.0
            for term, weight in weights.items()
        )
        score = found / total
        if asks_number and _HAS_NUMBER.search(unit.quote):
            score += NUMBER_BONUS
        scored.append((score, index, unit))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(score, unit) for score, _, unit in scored]
