"""Tokenizer shared by the embedder and keyword search.

Text is NFKC-normalised (fullwidth letters and digits become ASCII), folded into
simplified Chinese (`retrieval.chinese`) and lowercased, so indexing and questions
meet in one form whatever script either is written in. Latin text gives words;
numbers stay whole ("3.5", "1,000" -> "1000", "1.2.3"). CJK and Hangul runs come
whole: `keyword_tokens` cuts them into jieba words for BM25, `tokenize` and the
embedder into character unigrams and bigrams.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator
from itertools import pairwise

from core.text import CJK_LETTERS, GROUPED_NUMBER

from .chinese import to_simplified
from .lexicon import en

# A version number's dots stay in one term ("1.2.3").
_NUMBER = rf"{GROUPED_NUMBER}|\d+(?:\.\d+)*"
_WORD = rf"[^\W\d_{CJK_LETTERS}][^\W_{CJK_LETTERS}]*(?:['\u2019][^\W_{CJK_LETTERS}]+)*"
_TERM_RE = re.compile(
    rf"(?P<number>{_NUMBER})|(?P<cjk>[{CJK_LETTERS}]+)|(?P<word>{_WORD})"
)
_CJK_RUN_RE = re.compile(f"([{CJK_LETTERS}]+)")
_LATIN_TERM_RE = re.compile(f"{_NUMBER}|{_WORD}")
_GROUPED_DIGITS_RE = re.compile(r"\d,\d{3}")


def _folded(text: str) -> str:
    """NFKC, simplified, lowercase. NFKC goes first: it turns compatibility
    ideographs and Kangxi radicals into the characters the converter knows."""
    return to_simplified(unicodedata.normalize("NFKC", text)).lower()


def iter_terms(text: str) -> Iterator[tuple[bool, str]]:
    """Yield (is_cjk_run, term) in text order; CJK runs come whole."""
    for match in _TERM_RE.finditer(_folded(text)):
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


def term_runs(text: str) -> Iterator[tuple[bool, list[str]]]:
    """The terms of `iter_terms`, a run at a time: (True, [cjk_run]) or
    (False, [the words and numbers between two CJK runs]).

    The same terms, found with one `findall` per run instead of a match object per
    term: the embedder reads every chunk through it.
    """
    for index, segment in enumerate(_CJK_RUN_RE.split(_folded(text))):
        if index % 2:
            yield True, [segment]
        elif segment:
            terms = _LATIN_TERM_RE.findall(segment.replace("\u2019", "'"))
            if _GROUPED_DIGITS_RE.search(segment):  # "1,000": only numbers lose commas
                terms = [term.replace(",", "") for term in terms]
            if terms:
                yield False, terms


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for is_cjk, term in iter_terms(text):
        if is_cjk:
            tokens.extend(cjk_ngrams(term))
        else:
            tokens.append(term)
    return tokens


_jieba = None


def segmenter():
    """jieba, loaded once per process: its dictionary is slow to load."""
    global _jieba
    if _jieba is None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        _jieba = jieba
    return _jieba


def keyword_tokens(text: str) -> list[str]:
    """Tokens for BM25: jieba words for Chinese, lowercased words, whole numbers.

    Chinese is cut on jieba's dictionary alone (no HMM), so a word unknown to it
    falls into single characters the same way in a question and in a passage. The
    words jieba's HMM would guess (often names) are added after them, not instead:
    where the guess is the same on both sides it is extra evidence, where it
    differs the characters still match.
    """
    jieba = segmenter()
    tokens: list[str] = []
    for is_cjk, term in iter_terms(text):
        if not is_cjk or len(term) == 1:
            tokens.append(term)
            continue
        words = [w for w in jieba.lcut_for_search(term, HMM=False) if w.strip()]
        known = set(words)
        tokens.extend(words)
        tokens.extend(
            word
            for word in jieba.lcut(term, HMM=True)
            if len(word) > 1 and word not in known
        )
    return tokens


_SPACES = re.compile(r"\s+")


def normalized(text: str, *, fold: bool = True) -> str:
    """NFKC, simplified, lowercase, single spaces: the form `word_pairs` phrases
    are found in. `fold=False` skips the conversion, for a text that `folds`
    found the same in simplified script."""
    if fold:
        return _SPACES.sub(" ", _folded(text))
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower())


def folds(text: str) -> bool:
    """Whether reading `text` in simplified script changes it (most simplified
    and all English text stays as it is)."""
    text = unicodedata.normalize("NFKC", text)
    return to_simplified(text) != text


def word_pairs(text: str) -> list[tuple[str, str, str]]:
    """Adjacent words of `text`: (first, second, the pair as written, normalised).

    Words are jieba's (no HMM) inside CJK runs, and whole words and numbers
    elsewhere; a pair is only formed across nothing but whitespace.
    """
    text = normalized(text)
    spans: list[tuple[int, int, str]] = []
    for match in _TERM_RE.finditer(text):
        if match.lastgroup != "cjk":
            value = match.group().replace(",", "").replace("\u2019", "'")
            spans.append((match.start(), match.end(), value))
            continue
        start = match.start()
        for word in segmenter().lcut(match.group(), HMM=False):
            spans.append((start, start + len(word), word))
            start += len(word)
    return [
        (first, second, text[start:end])
        for (start, gap_start, first), (gap_end, end, second) in pairwise(spans)
        if not text[gap_start:gap_end].strip()
    ]


def query_tokens(question: str) -> list[str]:
    """A question's BM25 tokens: `keyword_tokens` without the words that only
    shape an English question (`en.SEARCH_QUESTION_WORDS`), unless the question
    is nothing else. A knowledge base of FAQs and slides full of "What ...?"
    would otherwise outrank the passage that holds the question's subject;
    jieba's Chinese function words are kept (leaving them out measured worse
    answers, docs/retrieval-quality.md)."""
    tokens = keyword_tokens(question)
    kept = [token for token in tokens if token not in en.SEARCH_QUESTION_WORDS]
    return kept or tokens
