"""Tokenizer shared by the embedder and keyword search.

Text is NFKC-normalised (fullwidth letters and digits become ASCII) and lowercased.
Latin text gives words; numbers stay whole ("3.5", "1,000" -> "1000", "1.2.3"). CJK
and Hangul runs give character unigrams and bigrams: a dictionary-free stand-in until a
word segmenter such as jieba is swapped in behind the same functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Radicals, kana, bopomofo, Han (BMP and supplementary planes), Hangul. Punctuation is
# left out: after NFKC it is plain ASCII punctuation or ignorable.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
_TERM_RE = re.compile(
    rf"""
    (?P<number>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)*)
    | (?P<cjk>[{_CJK}]+)
    | (?P<word>[^\W\d_{_CJK}][^\W_{_CJK}]*(?:['\u2019][^\W_{_CJK}]+)*)
    """,
    re.VERBOSE,
)


def iter_terms(text: str) -> Iterator[tuple[bool, str]]:
    """Yield (is_cjk_run, term) in text order; CJK runs come whole."""
    for match in _TERM_RE.finditer(unicodedata.normalize("NFKC", text).lower()):
        kind = match.lastgroup
        value = match.group()
        if kind == "number":
            yield False, value.replace(",", "")
        elif kind == "cjk":
            yield True, value
        else:
            yield False, value.replace("\u2019", "'")


def cjk_ngrams(run: str) -> list[str]:
    """Character unigrams followed by bigrams of one CJK run."""
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for is_cjk, term in iter_terms(text):
        if is_cjk:
            tokens.extend(cjk_ngrams(term))
        else:
            tokens.append(term)
    return tokens
