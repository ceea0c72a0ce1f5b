"""Tokens of follow-up questions (`followups`): a tokenizer that keeps each
token's offsets in the question, so that a phrase can be replaced where it
stands. The closed word classes they are read with are in `lexicon`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text import HAN
from retrieval.lexicon import en, zh
from retrieval.tokens import segmenter

CJK = HAN + "〇"  # with the ideographic zero
# Contractions fall apart ("what's" -> "what", "s"): the pieces are stopwords.
TOKEN = re.compile(rf"(?P<cjk>[{CJK}]+)|(?P<word>[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*)")
HAS_CJK = re.compile(f"[{CJK}]")


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    cjk: bool

    @property
    def key(self) -> str:
        return self.text if self.cjk else stem(self.text.lower())

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def content(self) -> bool:
        if self.cjk:
            return self.text not in zh.FOLLOWUP_STOPWORDS
        return self.lower not in en.FOLLOWUP_STOPWORDS


def stem(word: str) -> str:
    """A crude plural fold ("incidents" matches "incident")."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def question_tokens(text: str) -> list[Token]:
    """Latin words and jieba words (no HMM), with their offsets in `text`.

    Runs of single CJK characters that are not stopwords are joined back into one
    word: jieba leaves a word missing from its dictionary in pieces ("年", "假").
    """
    tokens: list[Token] = []
    for match in TOKEN.finditer(text):
        if match.lastgroup == "word":
            tokens.append(Token(match.group(), match.start(), match.end(), False))
            continue
        start = match.start()
        pieces: list[Token] = []
        for word in segmenter().lcut(match.group(), HMM=False):
            pieces.append(Token(word, start, start + len(word), True))
            start += len(word)
        tokens.extend(join_single_characters(pieces, text))
    return tokens


def join_single_characters(pieces: list[Token], text: str) -> list[Token]:
    joined: list[Token] = []
    run: list[Token] = []

    def flush() -> None:
        if run:
            start, end = run[0].start, run[-1].end
            joined.append(Token(text[start:end], start, end, True))
            run.clear()

    for piece in pieces:
        if len(piece.text) == 1 and piece.content:
            run.append(piece)
        else:
            flush()
            joined.append(piece)
    flush()
    return joined


def is_chinese(text: str) -> bool:
    return bool(HAS_CJK.search(text))


def has_question_word(tokens: Sequence[Token]) -> bool:
    return any(
        token.text in zh.QUESTION_WORDS
        if token.cjk
        else token.lower in en.QUESTION_WORDS
        for token in tokens
    )


def joined(left: str, right: str) -> str:
    """`left` + `right`, with a space unless CJK meets CJK."""
    if not left or not right:
        return left + right
    if HAS_CJK.match(left[-1]) and HAS_CJK.match(right[0]):
        return left + right
    return f"{left} {right}"


def in_place_of(phrase: str, start: int) -> str:
    """`phrase` cased for where it goes: a capital only at the start."""
    first = phrase.split(" ", 1)[0]
    if start == 0:
        return phrase[:1].upper() + phrase[1:]
    if first[:1].isupper() and first[1:].islower():  # "Sick leave?", not "SEV2"
        return phrase[:1].lower() + phrase[1:]
    return phrase
