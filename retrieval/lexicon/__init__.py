"""What the answerer knows of its languages, as data: one module per language
(`en`, `zh`, after spaCy's `lang/<xx>/`), and here what both share.

To add a word, add it to the set that reads it (each says who does) and measure
the answers before and after (docs/architecture/answers.md, "Lexicon and rules").
"""

from __future__ import annotations

import math
import re

from . import en, zh

# A year as the answerer reads questions, tables and designators: 1900-2099, so
# that "1850" in a table stays an amount.
YEAR_DIGITS = r"(?:19|20)\d\d"
YEAR = re.compile(rf"(?<!\d)({YEAR_DIGITS})(?!\d)")
# Follow-ups' items and the time cue of evidence also take the 1800s (a
# history's years): they name a period, never an amount in a table.
WIDE_YEAR_DIGITS = r"(?:1[89]|20)\d\d"

# The answerer reads questions in both languages at once.
ANSWER_STOPWORDS = zh.ANSWER_STOPWORDS | en.ANSWER_STOPWORDS
ANSWER_KIND_NOUNS = zh.ANSWER_KIND_NOUNS | en.ANSWER_KIND_NOUNS


def idf(size: int, frequency: float) -> float:
    """BM25's inverse document frequency, never negative: a term in `frequency`
    of `size` texts."""
    return math.log1p((size - frequency + 0.5) / (frequency + 0.5))


__all__ = [
    "ANSWER_KIND_NOUNS",
    "ANSWER_STOPWORDS",
    "WIDE_YEAR_DIGITS",
    "YEAR",
    "YEAR_DIGITS",
    "en",
    "idf",
    "zh",
]
