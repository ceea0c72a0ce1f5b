"""Words and tokens of follow-up questions (`followups`): the closed word classes
of English and Chinese (question words, auxiliaries, pronouns, stopwords, time
words) and a tokenizer that keeps each token's offsets in the question, so that a
phrase can be replaced where it stands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text import HAN

from ..tokens import segmenter


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_QUESTION_WORDS = word_set("what which who whom whose when where why how")
EN_AUXILIARIES = word_set(
    "is are was were be been being am do does did have has had can could shall "
    "should will would may might must"
)
EN_STOPWORDS = (
    EN_QUESTION_WORDS
    | EN_AUXILIARIES
    | word_set(
        "a an the of for in on to at by from with as into onto over under about "
        "after before during between within without per than then so if or and "
        "but nor not no yes also too very just only again else any some all each "
        "every much many long there here i me my we us our you your it its they "
        "them their he him his she her this that these those one ones please tell "
        "get gets got same ok okay thanks thank great fine sure cool "
        # What contractions leave: "what's" is "what", "s".
        "s t re ll ve d m"
    )
)
EN_DETERMINERS = word_set("a an the")
# The word after these is a verb ("Where do I submit ...", "Who approves ...").
EN_BEFORE_VERB = word_set("i we you they who to")
EN_PERSONAL = word_set("it they them he she him")
EN_POSSESSIVE = word_set("its their his")
EN_DEMONSTRATIVE = word_set("this that these those")
EN_TIME_WORDS = word_set(
    "year years month months week weeks quarter day days time morning afternoon "
    "evening weekend"
)
# "Is it possible to ...", "How long does it take to ...": "it" points at nothing.
EN_DUMMY_IT = re.compile(
    r"\bit\s+(?:is\s+|was\s+|'s\s+|will\s+be\s+|would\s+be\s+)?"
    r"(?:possible|necessary|true|allowed|ok|okay|required|mandatory|permitted|"
    r"important|better|best|likely|safe|legal|normal|common|hard|easy|enough|"
    r"time)\s+(?:to|that|for)\b|\bit\s+takes?\b|\b(?:seems?|looks?)\s+like\b",
    re.IGNORECASE,
)

ZH_QUESTION_WORDS = word_set(
    "多少 什么 几 几点 几个 几天 哪 哪些 哪个 哪里 哪儿 怎么 怎样 怎么样 怎么办 "
    "如何 为什么 为何 谁 何时 什么时候 多久 多长 多长时间 多大 多高 多远 吗 是否 "
    "有没有"
)
# Where a Chinese question's predicate starts: its subject is the words before.
ZH_PREDICATE = ZH_QUESTION_WORDS | word_set(
    "是 有 要 需要 需 应 应该 应当 必须 得 能 能够 可以 可 会 该 在 由 被 给 按 "
    "多 不 没有 属于 包括 包含 呢"
)
ZH_PERSONAL = word_set("它 他 她 它们 他们 她们")
ZH_DEMONSTRATIVE = word_set("其 该 这 这个 那个 此 这些 那些 这项 该项 此项")
ZH_TIME_WORDS = word_set("周 月 年 天 次 季度 星期 周末 时候")
ZH_STOPWORDS = (
    ZH_PREDICATE
    | ZH_PERSONAL
    | ZH_DEMONSTRATIVE
    | word_set(
        "的 了 吧 啊 呀 和 与 及 或 对 把 也 都 还 就 又 再 请 请问 一下 那 那么 "
        "还有 另外 然后 谢谢 好的 好 嗯 明白 收到 我 我们 你 你们"
    )
)

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
            return self.text not in ZH_STOPWORDS
        return self.lower not in EN_STOPWORDS


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
        token.text in ZH_QUESTION_WORDS
        if token.cjk
        else token.lower in EN_QUESTION_WORDS
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
