"""What a question asks: its terms, the item it names, the kind of answer it wants.

Pure text analysis (jieba words for Chinese, words for English); the answerer
matches these against evidence. A *term* is a content word of the question: jieba's
dictionary words, and runs of single characters joined back together (jieba leaves
words it does not know, mostly names, as single characters: "黑尾前肛鳗"). A *focus*
term names the kind of answer ("哪个国家" -> 国家, "which year" -> year): evidence
need not contain it. A *designator* names one of several parallel items ("level 1",
"SEV2", "二级", "2019"): evidence about a sibling ("level 2") does not answer it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from core.text import HAN, NUMBER
from retrieval.lexicon import ANSWER_KIND_NOUNS, ANSWER_STOPWORDS, YEAR, en, zh
from retrieval.tokens import iter_terms, keyword_tokens, normalized, segmenter

from . import rules

# Names kept whole: titles in 《》 and names joined by a middle dot ("姆拉登·佩特里奇").
_TITLE = re.compile(r"《([^》]{1,40})》")
_DOTTED_NAME = re.compile(rf"[{HAN}]+(?:[·・][{HAN}]+)+")

# Parallel items: a word that names items (`en.ITEM_HEADS`), then its number or
# letter ("level 1", "tier b", "phase ii"); a short head written together with
# its number ("sev2", "q3", "p1"); ordinals and levels in Chinese ("二级",
# "第三类", "一线"); and years.
_EN_DESIGNATOR = re.compile(r"\b([a-z]{1,12})[ -]?(\d{1,3}|[ivx]{1,4}|[a-h])\b")
_EN_JOINED_DESIGNATOR = re.compile(r"\b([a-z]{1,4})(\d{1,3})\b")
_ZH_DESIGNATOR = re.compile(
    rf"第?([{zh.NUMERALS}\d]+)"
    r"(号线|级|线|类|等|档|期|号|阶段|季度|季|版|届|条|章|节|代|组|区|批)"
)
# "第十一管区", "第7部": an ordinal names one of a series, whatever follows it.
_ZH_ORDINAL = re.compile(rf"第([{zh.NUMERALS}\d]+)([{HAN}])")
_NUMBER = re.compile(NUMBER)  # read with the commas taken out
_CJK = re.compile(f"[{HAN}]")
_CJK_RUN = re.compile(f"[{HAN}]+")
_VOWEL = re.compile(r"[aeiouy]")


@dataclass(frozen=True)
class Term:
    text: str  # normalised: NFKC, lower case; English words stemmed
    cjk: bool
    focus: bool = False
    written: str = ""  # as the question writes it, before stemming

    @cached_property
    def index_tokens(self) -> tuple[str, ...]:
        """The search index's tokens for this term (for its document frequency)."""
        return tuple(keyword_tokens(self.written or self.text))


@dataclass(frozen=True)
class Designator:
    head: str
    value: str


@dataclass(frozen=True)
class Question:
    text: str
    terms: tuple[Term, ...]
    grams: frozenset[str]  # CJK characters and character pairs, English words
    numbers: frozenset[str]  # numbers written in the question
    designators: tuple[Designator, ...]
    answer_kind: str | None  # "time", "place", "reason", "alias" or None
    asks_number: bool
    asks_explanation: bool = False
    cues: frozenset[str] = frozenset()  # the `rules` it matches
    defines: str = ""  # "What is Trade receivables?": the thing to define
    # "What are the four golden signals of monitoring?": what a sentence that
    # answers it says is or are something ("The four golden signals ... are").
    restates: str = ""

    def asks(self, rule: str) -> bool:
        """Whether the question matches `rule` (a name of `rules.RULES`)."""
        if rule not in rules.RULE_NAMES:
            raise KeyError(rule)
        return rule in self.cues

    @property
    def content_terms(self) -> tuple[Term, ...]:
        """Terms whose absence from evidence counts against it."""
        return tuple(term for term in self.terms if not term.focus)

    def with_focus(self, words: frozenset[str]) -> Question:
        """The same question with `words` as focus terms (evidence need not hold
        them: "change", "average" say what to compute, not what about)."""
        terms = tuple(
            replace(term, focus=True) if term.text in words else term
            for term in self.terms
        )
        return replace(self, terms=terms)


# "According to the information, who is X?": how the question is put, not what
# it is about.
_FRAMING = re.compile(
    r"^\s*(?:according to|based on|as (?:stated|shown|given) in|from)\s+the\s+"
    r"(?:information|table|text|passage|report|document|data|context)"
    r"(?:\s+(?:given|provided|above|below))?\s*,\s*",
    re.IGNORECASE,
)


def analyse(question: str) -> Question:
    return _analyse(question, rules.switched_off())


@lru_cache(maxsize=4096)
def _analyse(question: str, _off: frozenset[str]) -> Question:
    """`analyse`, cached for the rules switched off (`rules.ablated`)."""
    text = normalized(_FRAMING.sub("", question))
    terms = _terms(_FRAMING.sub("", question))
    cues = rules.cues(question, text)
    return Question(
        text=question,
        terms=terms,
        grams=_grams(text),
        numbers=frozenset(_NUMBER.findall(text.replace(",", ""))),
        designators=designators_in(text),
        answer_kind=next(
            (kind for name, kind in rules.ANSWER_KINDS.items() if name in cues), None
        ),
        asks_number="asks-number" in cues,
        asks_explanation="asks-explanation" in cues,
        cues=cues,
        defines=_defined(text),
        restates=_restated(text),
    )


# "What is Trade receivables?", "What are Original Equipment Manufacturers?": a
# name without an article, an amount or a year asks what the thing is ("What is
# excluded from X?" does not).
_DEFINITION = re.compile(
    r"^(?:what|who) (?:is|are) (?!(?:the|a|an|this|that|our|its|their|total|net)\b)"
    r"(?![a-z]+ed (?:in|from|by|for|to|on|at|of|with|under|within)\b)"
    r"(?P<subject>[^?\d]{3,60}?)\s*\??$"
)


# "什么是总体评价？", "总体评价是指什么？"
_DEFINITION_ZH = re.compile(
    r"^(?:什么是|何谓)(?P<a>[^？?，,。的]{2,20})[？?]?$"
    r"|^(?P<b>[^？?，,。的]{2,20})(?:是指什么|指的是什么|的定义是什么)[？?]?$"
)


def _defined(text: str) -> str:
    match = _DEFINITION.match(text.strip())
    if match:
        return match["subject"]
    match = _DEFINITION_ZH.match(text.strip())
    return (match["a"] or match["b"]) if match else ""


_RESTATED = re.compile(
    r"^(?:what|who|which) (?:is|are|was|were) (?:the |an? )?"
    r"(?P<subject>[^?\d]{6,80}?)\s*\??$"
)


def _restated(text: str) -> str:
    match = _RESTATED.match(text.strip())
    return match["subject"] if match else ""


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English suffix fold, the same for questions and evidence: "days",
    "carried" and "updated" match "day", "carry" and "update"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("sses", "ss"), ("ies", "i"), ("ied", "i")):
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    plural = word.endswith("s") and not word.endswith(("ss", "us", "is"))
    if plural or word.endswith("eed"):
        word = word[:-1]
    else:
        for suffix in ("ing", "ed"):
            base = word[: -len(suffix)]
            if word.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
                word = base
                break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


def _terms(question: str) -> tuple[Term, ...]:
    """Content words in order; see the module docstring."""
    found = _TermSpans()

    def titled(match: re.Match) -> str:
        found.spans.append((match.group(1), True, ""))
        return " "

    text = _TITLE.sub(titled, normalized(question))
    found.spans.extend(
        (_dotted_name(run), True, "") for run in _DOTTED_NAME.findall(text)
    )
    after_number = False
    for is_cjk, chunk in iter_terms(text):
        if is_cjk and after_number and chunk[0] in zh.NUMBER_UNITS:
            chunk = chunk[1:]  # the unit of a number ("1969年"), not a word
        after_number = not is_cjk and bool(_NUMBER.fullmatch(chunk))
        if is_cjk:
            for word in segmenter().lcut(chunk, HMM=False):
                found.add_cjk(word)
        else:
            found.add_latin(chunk, is_number=after_number)
        found.end_run()
    return _terms_from_spans(found.spans)


class _TermSpans:
    """The candidate terms `_terms` collects, in order: (term, is CJK, the words
    before it, for the focus test)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, bool, str]] = []
        self._words: list[str] = []  # every word so far
        self._run: list[str] = []  # single CJK characters, to join into one term
        self._run_before = ""

    def add_latin(self, word: str, *, is_number: bool) -> None:
        self._words.append(word)
        self.end_run()
        if word not in ANSWER_STOPWORDS and len(word) > 1 and not is_number:
            self.spans.append((word, False, " ".join(self._words[-3:-1])))

    def add_cjk(self, word: str) -> None:
        before = "".join(self._words[-3:])
        self._words.append(word)
        if (
            word in ANSWER_STOPWORDS
            or zh.QUESTION_WORD.fullmatch(word)
            or zh.QUESTION_WORD_START.match(word)
            or zh.COUNTED.fullmatch(word)
            or (len(word) == 1 and word in zh.GLUE_CHARACTERS)
        ):
            self.end_run()
        elif len(word) == 1:
            if not self._run:
                self._run_before = before
            self._run.append(word)
        else:
            self.end_run()
            self.spans.append((word, True, before))

    def end_run(self) -> None:
        if self._run:
            self.spans.append(("".join(self._run), True, self._run_before))
            self._run.clear()


def _terms_from_spans(spans: list[tuple[str, bool, str]]) -> tuple[Term, ...]:
    terms: dict[str, Term] = {}
    for term, is_cjk, before in spans:
        if is_cjk and len(term) == 1:
            continue  # a lone character names little and matches anything
        text = term if is_cjk else stem(term)
        focus = term in ANSWER_KIND_NOUNS or bool(
            (zh.FOCUS_AFTER if is_cjk else en.FOCUS_BEFORE).search(before)
        )
        terms.setdefault(text, Term(text, is_cjk, focus, term))
    return tuple(terms.values())


def _dotted_name(run: str) -> str:
    """The part of "莱昂德罗·内托曾效力过…" that is surely the name: from the
    character before the first dot to the one after the last ("罗·内"). Where the
    name's ends are, the words around it do not tell; its dots are its own."""
    parts = re.split("[·・]", run)
    return "·".join([parts[0][-1:], *parts[1:-1], parts[-1][:1]])


def _grams(text: str) -> frozenset[str]:
    """CJK characters (but glue) and adjacent pairs, and English words, of the
    question without its question words."""
    text = zh.QUESTION_WORD.sub(" ", text)
    grams: set[str] = set()
    for run in _CJK_RUN.findall(text):
        grams.update(char for char in run if char not in zh.GLUE_CHARACTERS)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    grams.update(
        stem(word)
        for word in re.findall(r"[a-z0-9]+", text)
        if word not in ANSWER_STOPWORDS and not word.isdigit()
    )
    return frozenset(grams)


def designators_in(text: str) -> tuple[Designator, ...]:
    """The parallel items a (normalised) text names."""
    found: list[Designator] = []
    for head, value in _EN_DESIGNATOR.findall(text):
        if head in en.ITEM_HEADS:
            found.append(Designator(head, _number_value(value)))
    for head, value in _EN_JOINED_DESIGNATOR.findall(text):
        if head not in ANSWER_STOPWORDS:
            found.append(Designator(head, _number_value(value)))
    for value, head in _ZH_DESIGNATOR.findall(text):
        found.append(Designator(head, _number_value(value)))
    for value, head in _ZH_ORDINAL.findall(text):
        found.append(Designator(head, _number_value(value)))
    found.extend(Designator("year", year) for year in YEAR.findall(text))
    return tuple(dict.fromkeys(found))


def _number_value(value: str) -> str:
    """ "2", "二", "ii" and "II" are the same item number."""
    value = unicodedata.normalize("NFKC", value).lower()
    if value.isdigit():
        return str(int(value))
    if value in en.ROMAN_NUMERALS:
        return str(en.ROMAN_NUMERALS[value])
    if all(char in zh.DIGITS or char in "十百" for char in value):
        return str(_chinese_number(value))
    return value


def _chinese_number(value: str) -> int:
    total, digit = 0, 0
    for char in value:
        if char == "十":
            total += (digit or 1) * 10
            digit = 0
        elif char == "百":
            total += (digit or 1) * 100
            digit = 0
        else:
            digit = zh.DIGITS[char]
    return total + digit


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))
