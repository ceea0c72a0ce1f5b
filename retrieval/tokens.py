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
import math
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
    tokens: list[str] = []
    for is_cjk, term in iter_terms(text):
        if not is_cjk or len(term) == 1:
            tokens.append(term)
        else:
            tokens.extend(_cjk_tokens(term))
    return tokens


def _cjk_tokens(run: str) -> list[str]:
    """A CJK run's `keyword_tokens`: `jieba.lcut_for_search(run, HMM=False)`, then
    the words longer than one character of `jieba.lcut(run, HMM=True)` that are
    not among them, from one pass of jieba's dictionary instead of two.

    Both modes cut a block of Han characters along the same route of dictionary
    words (`_route`); they differ only where the route leaves consecutive single
    characters that are not a dictionary word together: the HMM cuts those into
    its guesses. Search mode adds the 2- and 3-character dictionary words inside
    each word longer than them. jieba 0.42.1; `tests/retrieval/test_tokens.py`
    holds the result equal to the two jieba calls.
    """
    jieba = segmenter()
    freq = jieba.dt.FREQ
    searched: list[str] = []
    guessed: list[str] = []
    for block in jieba.re_han_default.split(run):
        if not block:
            continue
        if not jieba.re_han_default.match(block):
            searched.extend(block)  # outside jieba's Han range: a word a character
            continue
        single = ""  # consecutive one-character words of the route
        for word in _route(block, freq, math.log(jieba.dt.total)):
            size = len(word)
            if size > 2:
                searched.extend(_known_grams(word, 2, freq))
            if size > 3:
                searched.extend(_known_grams(word, 3, freq))
            searched.append(word)
            if size == 1:
                single += word
                continue
            guessed.extend(_hmm_words(single, freq))
            guessed.append(word)
            single = ""
        guessed.extend(_hmm_words(single, freq))
    known = set(searched)
    return searched + [w for w in guessed if len(w) > 1 and w not in known]


def _known_grams(word: str, size: int, freq: dict) -> list[str]:
    return [
        word[i : i + size]
        for i in range(len(word) - size + 1)
        if freq.get(word[i : i + size])
    ]


def _route(block: str, freq: dict, log_total: float) -> list[str]:
    """jieba's most probable cut of `block` into dictionary words (`get_DAG`
    and `calc` in one loop, same sums in the same order, same ties: the longer
    word)."""
    size = len(block)
    scores = [0.0] * (size + 1)
    ends = list(range(size))
    for start in range(size - 1, -1, -1):
        best = None
        end = start
        count = freq.get(block[start])
        while count is not None:
            if count:
                score = math.log(count) - log_total + scores[end + 1]
                if best is None or score >= best:
                    best = score
                    ends[start] = end
            end += 1
            if end == size:
                break
            count = freq.get(block[start : end + 1])
        scores[start] = -log_total + scores[start + 1] if best is None else best
    words = []
    start = 0
    while start < size:
        words.append(block[start : ends[start] + 1])
        start = ends[start] + 1
    return words


def _hmm_words(single: str, freq: dict) -> list[str]:
    """What jieba's accurate mode makes of a run of one-character route words:
    the characters of a dictionary word, one alone, else the HMM's guesses."""
    if len(single) < 2 or freq.get(single):
        return list(single)
    finalseg = segmenter().finalseg
    if finalseg.Force_Split_Words:
        return list(finalseg.cut(single))
    states = _viterbi(single, finalseg)
    words = []
    begin = end = 0
    for index, state in enumerate(states):
        if state == "B":
            begin = index
        elif state in "ES":
            words.append(single[begin if state == "E" else index : index + 1])
            end = index + 1
    if end < len(single):
        words.append(single[end:])
    return words


# finalseg's states and, for each, the states that may precede it.
_PRECEDING = {"B": "ES", "M": "MB", "S": "SE", "E": "BM"}


def _viterbi(text: str, finalseg) -> list[str]:
    """finalseg.viterbi's states of `text` (B, M, E, S), its sums in its order and
    its ties (the later state name), with back-pointers instead of path copies."""
    low = finalseg.MIN_FLOAT
    emit = finalseg.emit_P
    steps = [
        (
            state,
            [
                (before, finalseg.trans_P[before].get(state, low))
                for before in preceding
            ],
        )
        for state, preceding in _PRECEDING.items()
    ]
    scores = {s: finalseg.start_P[s] + emit[s].get(text[0], low) for s in "BMES"}
    pointers = []
    for char in text[1:]:
        nexts, backs = {}, {}
        for state, ((first, to_first), (second, to_second)) in steps:
            emitted = emit[state].get(char, low)
            a = scores[first] + to_first + emitted
            b = scores[second] + to_second + emitted
            if a > b or (a == b and first > second):
                nexts[state], backs[state] = a, first
            else:
                nexts[state], backs[state] = b, second
        scores = nexts
        pointers.append(backs)
    state = max((scores[s], s) for s in "ES")[1]
    states = [state]
    for backs in reversed(pointers):
        state = backs[state]
        states.append(state)
    return states[::-1]


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
