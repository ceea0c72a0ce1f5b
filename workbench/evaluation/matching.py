"""Whether an answer holds a gold answer: the rules `evaluate_answers` scores by.

Text is compared after NFKC, case-folding and removing whitespace and thousands
separators. A gold answer that is a number (TAT-QA arithmetic and count answers, a
span such as "$1,496.5" or "(12.5)") must appear as a whole number, not inside a
longer one; a computed number counts when, rounded to the gold answer's decimal
places, it equals the gold answer (TAT-QA rounds to two places).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")
_SIGNS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-"})
_GOLD_NUMBER = re.compile(r"^[$€£¥(]*(-?\d+(?:\.\d+)?)[%)]*$")
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?(?![\d]|\.\d)")


def normalized(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_SIGNS)
    return _SPACE.sub("", _THOUSANDS.sub("", text))


def holds(answer_text: str, gold: str) -> bool:
    """`gold` appears in `answer_text` by the rules above."""
    text, wanted = normalized(answer_text), normalized(gold)
    if not wanted:
        return False
    number = _GOLD_NUMBER.match(wanted)
    if number is None:
        return wanted in text
    return _holds_number(text, Decimal(number.group(1)))


def _holds_number(text: str, gold: Decimal) -> bool:
    quantum = Decimal(1).scaleb(min(0, gold.as_tuple().exponent))
    for match in _NUMBER.finditer(text):
        value = Decimal(match.group())
        try:
            if value == gold or value.quantize(quantum) == gold:
                return True
        except InvalidOperation:  # more digits than the context holds
            continue
    return False


def answer_hit(answer_text: str, answers: Sequence[str], *, all_of: bool) -> bool:
    """One of `answers` is held (alternatives), or every one (`all_of`: the spans
    of a TAT-QA multi-span answer)."""
    if not answers:
        return False
    found = (holds(answer_text, gold) for gold in answers)
    return all(found) if all_of else any(found)


def contains(answer_text: str, gold: str) -> bool:
    """A knowledge-base folder's rule: the gold answer held after NFKC,
    case-folding and removing all whitespace (nothing else)."""

    def plain(text: str) -> str:
        return _SPACE.sub("", unicodedata.normalize("NFKC", text).casefold())

    wanted = plain(gold)
    return bool(wanted) and wanted in plain(answer_text)
