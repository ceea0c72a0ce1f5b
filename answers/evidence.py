"""Sources cut into evidence units, each with the context that sets its subject.

A unit is a sentence (cut at 。！？.!? and line ends) or a table row (`a | b | c`
lines from our parsers). Headings and table header rows are context, never
evidence. A sentence's context is the sentence before it in its paragraph, the
first sentence of its section and its heading path ("It must respond within 7
minutes" under "Level 1"); a row's context is its table's header and caption.
A footnote ("(3) Include office building expenses ...") has for context the
labels of the rows that carry its mark ("Other external purchases(3)").
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from core.text import HAN
from retrieval.tokens import iter_terms

from .tables import Row, Table, is_row_line, read_table
from .types import Section, Source

_SENTENCE = re.compile(
    r"[^。！？!?\n]+?(?:[。！？!?]+[”’」』）)\"']*|\.(?=\s|$)[”’\"')]*|$)|[^。！？!?\n]+"
)
# A period that ends an abbreviation, not the sentence: titles always; initials
# ("U.S.", "Andrew R.") and company forms ("Ltd.", "Inc.") unless a word that
# opens sentences follows.
_TITLE = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|e\.g|i\.e|cf|approx|Fig|Figs|No|Nos"
    r"|Ste|Apt|Bldg|Blvd|Ave|Dept|Vol|Ref|Para|pp)\.$",
    re.I,
)
_INITIAL_OR_FORM = re.compile(
    r"(?:\b[A-Z]|\b(?:Inc|Ltd|Co|Corp|Plc|Pty|Bhd|Ltda|L\.P|N\.V|S\.A|B\.V))\.$"
)
_OPENS_SENTENCE = re.compile(
    r"(?:The|This|These|That|Those|It|Its|We|Our|Us|They|Their|In|On|As|At|For|If"
    r"|A|An|Of|To|During|Since|After|Before|When|While|However|Also|There|Such"
    r"|Each|All|Any|Some|No|Not|Total|See|Refer)\b"
)
# A sentence that says what a table shows: "The following table summarizes ...".
_NAMES_A_TABLE = re.compile(
    r"\b(?:following|below|above|this) tables?\b|\btables? (?:below|above)\b"
    r"|\bas follows\b|\bthe following\b.*:$|下表|如下表",
    re.I,
)
_CLAUSE_END = re.compile(r"[^；;]+(?:[；;]|$)")
_HAS_NUMBER = re.compile(r"\d")
_CJK = re.compile(f"[{HAN}]")
# A label is at most this many words (CJK: three characters a word), a caption
# below a line at most this many.
MAX_LABEL_WORDS = 6
MAX_CAPTION_WORDS = 12
# A list is read to this many items of at most this many words.
MAX_LIST_ITEMS = 10
MAX_ITEM_WORDS = 15
_LABEL_END = re.compile(r"[.!?;:。！？；：,，]\s*$|^\W*$")
# Wholly in parentheses, words not a sentence, not a footnote mark ("(a)").
_CAPTION = re.compile(
    rf"[(（](?![a-z0-9ivx]{{1,3}}[)）])[^()（）]*[A-Za-z{HAN}][^()（）]*"
    r"(?<![.!?。！？])[)）]"
)
_WORD = re.compile(r"[^\W\d_]")
# A footnote mark: at the end of a row's label, at the start of its note.
_MARK_AT_END = re.compile(r"\s*\((\d{1,2}|[a-z])\)\s*$")
_MARK_AT_START = re.compile(r"^\((\d{1,2}|[a-z])\)\s")


@dataclass(frozen=True)
class Unit:
    """One piece of evidence: a sentence or a table row of one source."""

    source_id: str
    quote: str  # verbatim text of the source
    text: str  # what a claim says: the quote, a row labelled by its header
    heading: str  # the heading path, joined
    before: str = ""  # the sentence before it in its paragraph
    lead: str = ""  # the first sentence of its section, when that is another one
    header: str = ""  # a row's column labels
    table: Table | None = None
    row: Row | None = None
    rank: int = 0  # the rank of its source in the search
    position: int = 0  # its order in the source
    continues: bool = False  # a clause after "；" or ";" of the sentence before
    paragraph: str = ""  # the paragraph it is part of (a row: its table's rows)
    note_of: str = ""  # a footnote: the labels of the rows that carry its mark
    # A term alone on the line before its paragraph, as glossaries and
    # definition lists write it ("Black-box monitoring" / "Testing ...").
    label: str = ""
    # The list a sentence ending in a colon leads into ("... supported:" /
    # "Headings." / "Lists."), as short lines after it.
    items: tuple[str, ...] = ()

    @property
    def context(self) -> str:
        parts = (self.label, self.before, self.lead, self.heading, self.note_of)
        return " ".join(part for part in parts if part)

    @property
    def only_numbers(self) -> bool:
        """A table row whose cells past its label hold no words: it says how
        much, never why or what something is."""
        if self.row is None:
            return False
        return not any(_WORD.search(cell) for cell in self.row.cells[1:])


def evidence_units(source: Source, rank: int = 0) -> Iterator[Unit]:
    """Sentences and rows of each section of `source` that the source text holds."""
    seen: set[str] = set()
    sections = source.sections or [
        Section(source.text, source.heading_path, source.page)
    ]
    position = 0
    for section in sections:
        for unit in _section_units(source.id, section):
            # Overlapping chunks repeat sentences; a clipped source lacks its tail.
            if unit.quote not in seen and unit.quote in source.text:
                seen.add(unit.quote)
                position += 1
                yield replace(unit, rank=rank, position=position)


def sentence_texts(
    text: str, heading_path: Sequence[str] = (), page: int | None = None
) -> list[str]:
    """What the answerer compares with a question, of one chunk read alone: its
    sentences and rows as `evidence_units` cuts them (a row with its labels)."""
    section = Section(text, list(heading_path), page)
    alone = Source(
        id="S1",
        document_id=None,
        document_version=0,
        knowledge_base_id="",
        filename="",
        heading_path=list(heading_path),
        page=page,
        text=text,
        sections=[section],
    )
    return list(dict.fromkeys(unit.text for unit in evidence_units(alone)))


def with_notes(units: list[Unit], document_of: Mapping[str, object]) -> list[Unit]:
    """`units` with each footnote given the labels of the rows carrying its mark
    in the same document (`document_of`: source id -> document)."""
    labels: dict[tuple[object, str], list[str]] = defaultdict(list)
    for unit in units:
        mark = _MARK_AT_END.search(unit.row.cells[0]) if unit.row else None
        if mark:
            label = unit.row.cells[0][: mark.start()].strip()
            labels[(document_of.get(unit.source_id), mark[1])].append(label)
    if not labels:
        return units
    noted = []
    for unit in units:
        mark = _MARK_AT_START.match(unit.quote) if unit.row is None else None
        named = labels.get((document_of.get(unit.source_id), mark[1])) if mark else None
        noted.append(
            replace(unit, note_of=" ".join(dict.fromkeys(named))) if named else unit
        )
    return noted


def tables_of(source: Source) -> Iterator[Table]:
    """The tables of `source`, one per run of row lines in a section, each with
    the sentence that says what it shows, where the section has one."""
    sections = source.sections or [
        Section(source.text, source.heading_path, source.page)
    ]
    for section in sections:
        tables: list[Table] = []
        captions: list[str] = []
        rows: list[str] = []
        text_before = ""
        for line in _lines(section.text):
            if is_row_line(line):
                if not rows:
                    lead = _sentences(text_before)[-1:] if text_before else []
                    captions.append(lead[0] if lead and lead[0].endswith(":") else "")
                rows.append(line)
                continue
            if rows:
                tables.append(read_table(rows))
                rows = []
            text_before = line
        if rows:
            tables.append(read_table(rows))
        if len(tables) == 1 and not captions[0]:
            captions[0] = next(
                (
                    sentence
                    for line in _lines(section.text)
                    if not is_row_line(line)
                    for sentence in _sentences(line)
                    if _NAMES_A_TABLE.search(sentence)
                ),
                "",
            )
        for table, caption in zip(tables, captions, strict=True):
            yield replace(table, caption=caption) if caption else table


def _lines(text: str) -> Iterator[str]:
    """Non-blank lines; blank lines separate blocks, also rows of one table."""
    for raw_line in text.split("\n"):
        line = raw_line.strip()
        if line:
            yield line


def _section_units(source_id: str, section: Section) -> Iterator[Unit]:
    headings = {_normal(title) for title in section.heading_path}
    heading = " ".join(section.heading_path)
    rows: list[str] = []
    lead = ""

    def table() -> Iterator[Unit]:
        if rows:
            yield from _row_units(source_id, read_table(rows), heading)
            rows.clear()

    lines = list(_lines(section.text))
    lists = _lists(lines)
    label = ""
    for index, (line, following) in enumerate(
        zip(lines, [*lines[1:], ""], strict=True)
    ):
        if is_row_line(line):
            rows.append(line)
            continue
        yield from table()
        if _normal(line) in headings or _is_caption(line):
            continue
        if _is_caption(following):
            label = following
        elif _is_label(line, following):
            label = line
            continue
        lead = lead or _first_sentence(line, headings)
        yield from _paragraph_units(
            source_id, line, heading, headings, lead, label, lists.get(index, ())
        )
        label = ""
    yield from table()


def _lists(lines: list[str]) -> dict[int, tuple[str, ...]]:
    """The short lines after each line ending in a colon (by its index): the
    items of the list it leads into, when there are two or more."""
    found = {}
    for index, line in enumerate(lines):
        if is_row_line(line) or not line.endswith((":", "：")):
            continue
        items = []
        for item in lines[index + 1 : index + 1 + MAX_LIST_ITEMS]:
            if is_row_line(item) or item.endswith((":", "：")) or not _is_item(item):
                break
            items.append(item)
        if len(items) >= 2:
            found[index] = tuple(items)
    return found


def _is_item(line: str) -> bool:
    return _size(line) <= MAX_ITEM_WORDS


def _first_sentence(line: str, headings: set[str]) -> str:
    return next(
        (
            sentence
            for sentence in _sentences(line)
            if _is_evidence(sentence) and _normal(sentence) not in headings
        ),
        "",
    )


def _paragraph_units(
    source_id: str,
    line: str,
    heading: str,
    headings: set[str],
    lead: str,
    label: str,
    items: tuple[str, ...] = (),
) -> Iterator[Unit]:
    """The sentences of one paragraph, each clause after a semicolon its own unit
    (they are often about parallel items: "一线城市…600 元；其他城市…450 元")."""
    before = ""
    for sentence in _sentences(line):
        if not _is_evidence(sentence) or _normal(sentence) in headings:
            continue
        for index, clause in enumerate(_clauses(sentence)):
            yield Unit(
                source_id,
                clause,
                clause,
                heading,
                before=before,
                lead="" if lead in (sentence, clause) else lead,
                continues=index > 0,
                paragraph=line,
                label=label,
                items=items if clause.endswith((":", "：")) else (),
            )
            before = clause


def _is_label(line: str, following: str) -> bool:
    """A few words alone on their line, no sentence, before a paragraph that is
    one: the term that paragraph is about. A line that opens like a sentence or
    says a number ("The company serves 12 regions") is evidence, not a label."""
    if not following or is_row_line(following) or _LABEL_END.search(line):
        return False
    if _OPENS_SENTENCE.match(line) or _HAS_NUMBER.search(line):
        return False
    opening = _sentences(following)[:1]
    return (
        _size(line) <= MAX_LABEL_WORDS and bool(opening) and len(opening[0]) > len(line)
    )


def _size(line: str) -> float:
    """Words, a CJK character counting a third of one."""
    cjk = len(_CJK.findall(line))
    return len(_CJK.sub(" ", line).split()) + cjk / 3


def _is_caption(line: str) -> bool:
    """A line wholly in parentheses, as forms write what the line above holds
    ("6480 Cameron Street" / "(Address of principal executive offices)")."""
    return bool(_CAPTION.fullmatch(line)) and len(line.split()) <= MAX_CAPTION_WORDS


def _sentences(line: str) -> list[str]:
    sentences: list[str] = []
    for match in _SENTENCE.finditer(line):
        sentence = match.group().strip()
        if sentences and _ends_in_abbreviation(sentences[-1], sentence):
            sentences[-1] = f"{sentences[-1]} {sentence}"
        elif sentence:
            sentences.append(sentence)
    return sentences


def _ends_in_abbreviation(sentence: str, following: str) -> bool:
    if not sentence.endswith(".") or not following:
        return False
    if _TITLE.search(sentence):
        return True
    return bool(_INITIAL_OR_FORM.search(sentence)) and not _OPENS_SENTENCE.match(
        following
    )


def _clauses(sentence: str) -> list[str]:
    parts = [part.strip() for part in _CLAUSE_END.findall(sentence)]
    parts = [part for part in parts if part]
    if len(parts) < 2 or not all(_is_evidence(part) for part in parts):
        return [sentence]
    return parts


def _row_units(source_id: str, table: Table, heading: str) -> Iterator[Unit]:
    """Data rows of one table, each labelled by the column labels of its header."""
    header = " ".join(label for label in table.columns if label)
    for row in table.rows:
        yield Unit(
            source_id,
            row.quote,
            labelled_row(table, row),
            heading,
            header=header,
            table=table,
            row=row,
        )


def labelled_row(table: Table, row: Row) -> str:
    """A row as "header: value" pairs: "城市类别：一线城市；每晚上限（元）：600"."""
    if not any(table.columns):
        return row.quote
    cjk = bool(_CJK.search(row.quote + " ".join(table.columns)))
    label, glue = ("：", "；") if cjk else (": ", "; ")
    parts = []
    for column, value in enumerate(row.cells):
        if not value:
            continue
        name = table.columns[column] if column < len(table.columns) else ""
        parts.append(f"{name}{label}{value}" if name else value)
    return glue.join(parts)


def _is_evidence(sentence: str) -> bool:
    """Not a fragment: some words, or at least a number."""
    terms = [term for _, term in iter_terms(sentence)]
    return bool(terms) and (len(sentence) >= 6 or bool(_HAS_NUMBER.search(sentence)))


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split()).strip(" :：")
