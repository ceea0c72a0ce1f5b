"""Named items and noun phrases of a question, for follow-up resolution.

A named item is a label with a number or letter ("level 2", "SEV1", "二级",
"2019"): the parallel items a follow-up swaps. A noun run is a maximal run of
adjacent content words, roughly a noun phrase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.lexicon import WIDE_YEAR_DIGITS, en

from .followup_words import Token


def noun_runs(tokens: Sequence[Token], text: str) -> list[list[Token]]:
    """Maximal runs of adjacent content words: the question's noun phrases, roughly.

    A run ends at a stopword or punctuation, and a verb after "I", "who", "to" ...
    belongs to none.
    """
    items = [(item.start, item.end) for item in named_items(text)]
    runs: list[list[Token]] = []
    current: list[Token] = []
    for index, token in enumerate(tokens):
        # The letter of "tier A" is no article.
        content = token.content or any(s <= token.start < e for s, e in items)
        after_verb_cue = (
            index > 0
            and not token.cjk
            and tokens[index - 1].lower in en.BEFORE_VERB | {"how"}
        )
        gap = text[current[-1].end : token.start] if current else ""
        if not content or after_verb_cue or (gap and gap.strip()):
            if current:
                runs.append(current)
            current = [] if not content or after_verb_cue else [token]
            continue
        current.append(token)
    if current:
        runs.append(current)
    return runs


@dataclass(frozen=True)
class Item:
    key: str  # the label, normalised: "level", "sev", "级"; "#year" for years
    value: str
    start: int
    end: int
    value_start: int
    value_end: int


_NOT_ALNUM_BEFORE, _NOT_ALNUM_AFTER = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
# "over 150 kg" / "under 150 kg": one amount, on either side of it. The amount
# is the label, the comparison the value a follow-up swaps.
COMPARISONS = (
    "over|under|above|below|more than|less than|fewer than|at least|at most|up to"
)
_ITEM_PATTERNS = [
    re.compile(
        rf"{_NOT_ALNUM_BEFORE}(?P<value>{COMPARISONS})\s+"
        rf"(?P<label>\d+(?:[.,]\d+)*(?:\s?(?:%|[A-Za-z]{{1,6}}\b))?)",
        re.IGNORECASE,
    ),
    # "level 2", "version 2.1", "tier B", "level AA" (letters as capitals, one
    # letter repeated: grades).
    re.compile(
        rf"{_NOT_ALNUM_BEFORE}(?P<label>[A-Za-z][A-Za-z-]*)\s+"
        rf"(?P<value>\d+(?:\.\d+)*|(?P<letter>[A-Z])(?P=letter){{0,2}}){_NOT_ALNUM_AFTER}"
    ),
    # "SEV2", "SEV-2", "Q3", "P1", "FY2019", "level-2".
    re.compile(
        rf"{_NOT_ALNUM_BEFORE}(?P<label>[A-Za-z]{{1,5}})-?(?P<value>\d+){_NOT_ALNUM_AFTER}"
    ),
    # "第二级", "二级", "2级", "一线", "三年", "2019年", "第五条".
    re.compile(
        r"(?P<prefix>第)?(?P<value>[一二三四五六七八九十百两〇零]+|\d+)\s?"
        r"(?P<label>季度|年级|阶段|级|类|档|等|期|层|楼|号|版|线|星|代|年|月|周|天|"
        r"岁|次|名|批|轮|组|区|章|节|条|款|项)"
    ),
    re.compile(rf"(?<!\d)(?P<value>{WIDE_YEAR_DIGITS})(?!\d)"),
]
_YEAR = re.compile(rf"^{WIDE_YEAR_DIGITS}$")


def named_items(text: str) -> list[Item]:
    """The named items of `text`, left to right; earlier patterns win overlaps."""
    found: list[Item] = []
    taken: list[tuple[int, int]] = []
    for pattern in _ITEM_PATTERNS:
        for match in pattern.finditer(text):
            label = match.groupdict().get("label") or ""
            if label.lower() in en.FOLLOWUP_STOPWORDS:
                continue
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            value = match["value"]
            key = label.lower().replace("-", "").replace(" ", "")
            if not key or (key == "年" and _YEAR.match(value)):
                key = "#year"
            taken.append((match.start(), match.end()))
            found.append(
                Item(
                    key,
                    value.upper() if len(value) == 1 and value.isalpha() else value,
                    match.start(),
                    match.end(),
                    match.start("value"),
                    match.end("value"),
                )
            )
    return sorted(found, key=lambda item: item.start)


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
