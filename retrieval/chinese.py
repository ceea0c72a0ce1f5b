"""Traditional Chinese folded into simplified, so either script finds the other.

Search reads every text through `to_simplified` (see `retrieval.tokens`); stored
chunks, passages and quotes keep the script they were written in.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import opencc

from core.text import HAN

# The ideographs OpenCC maps (unified, extensions, compatibility): it changes no
# other character, so text without them (most English) is returned as it is.
_HAN = re.compile(f"[{HAN}]")
# The binding stops at a NUL and cannot encode a lone surrogate: convert around them.
_UNSAFE = re.compile("([\x00\ud800-\udfff]+)")


@cache
def _converter() -> opencc.OpenCC:
    """hk2s, built once per process on first use.

    hk2s is t2s plus Hong Kong's variant characters (衞, 敍, 粧 and a few more), and
    converts OpenCC-standard and Taiwan text exactly as t2s does; tw2s would also
    fold Taiwan's 著 for 着, but it rewrites the 著 of simplified 著名 and 所著
    and 么 into 幺 (docs/retrieval-quality.md, script normalisation).
    """
    return opencc.OpenCC("hk2s")


def to_simplified(text: str) -> str:
    """`text` in simplified script, for matching only.

    Character for character: every entry of the hk2s dictionaries of OpenCC 1.4.2
    maps a word to one of the same length. OpenCC does not promise it, so nothing
    carries offsets from the result back to the original.
    """
    if not _HAN.search(text):
        return text
    if len(text) <= _REMEMBERED_LENGTH:
        return _remembered(text)
    return _convert(text)


# Texts are often converted twice in a row (a snapshot row's flag, then its tokens;
# a question's tokens, its vector, its word pairs): chunk-sized ones are remembered.
_REMEMBERED_LENGTH = 4096


@lru_cache(maxsize=512)
def _remembered(text: str) -> str:
    return _convert(text)


def _convert(text: str) -> str:
    convert = _converter().convert
    if not _UNSAFE.search(text):
        return convert(text)
    parts = _UNSAFE.split(text)  # safe text at even indexes, the separators between
    parts[::2] = map(convert, parts[::2])
    return "".join(parts)
