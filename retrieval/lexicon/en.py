"""English: the closed word classes and cues the answerer and follow-ups read.

Several stopword sets on purpose: each was measured for its reader, and merging
them would change answers (a word that is noise to one names things for another).
"""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The answerer's (`question`): left out of a question's terms and grams.
ANSWER_STOPWORDS = word_set(
    "a an the what which who whom whose when where why how is are was were be been "
    "do does did of for in on to at by from with as and or per many much long "
    "can could should would will i we you our my your it its this that these those "
    "there their get gets have has had please tell me about any must shall may might "
    "not no than then so if into under over another"
)
# Search's (`retrieval.tokens.query_tokens`): narrower than the answerer's, since
# "long" (long-term), "it" (IT), "may" (May) and "who" (WHO) name things.
SEARCH_QUESTION_WORDS = word_set(
    "what what's which whose when where where's why how how's is are was were be "
    "been am do does did the a an of to in on at by for from with and or"
)
# Nouns that name the kind of answer rather than its subject ("the name of ...").
ANSWER_KIND_NOUNS = word_set("name place time date reason kind type way")
# Before a term, these make it the question's focus ("which year" -> year).
FOCUS_BEFORE = re.compile(r"(?:^|\s)(?:what|which|how|how many|how much)$")
# Heads of parallel items: "level 1", "tier b", "phase ii".
ITEM_HEADS = word_set(
    "level tier grade class category type group option plan phase stage zone band "
    "schedule appendix annex section part exhibit track lane wave step priority "
    "severity sev version release region area floor room building site line route "
    "unit item article clause chapter rule round season quarter week"
)
ROMAN_NUMERALS = {
    "i": 1,
    "ii": 2,
    "iii": 3,
    "iv": 4,
    "v": 5,
    "vi": 6,
    "vii": 7,
    "viii": 8,
}

# What evidence of an answer kind says, as pattern text (`ranking`'s bonus).
TIME_CUE = (
    r"\b(?:january|february|march|april|may|june|july|august|september|october"
    r"|november|december)\b"
)
PLACE_CUE = r"\b(?:in|at|located)\b"
REASON_CUE = (
    r"\b(?:due to|because|attributable|driven by|as a result|result(?:ed|ing)?"
    r" (?:from|in)|primarily|mainly|largely|owing to|reflect(?:s|ed|ing)?)\b"
)
ALIAS_CUE = r"\bknown\b|\bcalled\b"
# Number words, as pattern text, one list per reader (each measured for it):
# a number in evidence, for the bonus of a question asking one (`ranking`)...
NUMBER_WORD = (
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
    r"thirty|forty|fifty|hundred|thousand)\b"
)
# ... a quantity a claim says (`extractive`; "no" and "none" say zero: "No
# significant amounts were reclassified") ...
QUANTITY_WORD = (
    r"\b(?:no|none|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|half|once"
    r"|twice|double|several)\b"
)
# ... and the count before a unit ("two days", "a week", `measures`).
COUNT_BEFORE_UNIT = (
    r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|a|an|several|few)"
)
# Where "one" and "no" say no number ("one of", "no longer").
NOT_A_NUMBER = r"(?i:\bone (?:of|or more|another)\b|\bno (?:longer|one)\b)"

# Follow-up questions' word classes (`followups`): whole tokens, not patterns.
QUESTION_WORDS = word_set("what which who whom whose when where why how")
AUXILIARIES = word_set(
    "is are was were be been being am do does did have has had can could shall "
    "should will would may might must"
)
# Follow-ups' stopwords: broader than the answerer's, with the courtesy words of
# a conversation ("thanks", "ok") and what contractions leave ("what's" is
# "what", "s").
FOLLOWUP_STOPWORDS = (
    QUESTION_WORDS
    | AUXILIARIES
    | word_set(
        "a an the of for in on to at by from with as into onto over under about "
        "after before during between within without per than then so if or and "
        "but nor not no yes also too very just only again else any some all each "
        "every much many long there here i me my we us our you your it its they "
        "them their he him his she her this that these those one ones please tell "
        "get gets got same ok okay thanks thank great fine sure cool "
        "s t re ll ve d m"
    )
)
DETERMINERS = word_set("a an the")
# The word after these is a verb ("Where do I submit ...", "Who approves ...").
BEFORE_VERB = word_set("i we you they who to")
PERSONAL = word_set("it they them he she him")
POSSESSIVE = word_set("its their his")
DEMONSTRATIVE = word_set("this that these those")
TIME_WORDS = word_set(
    "year years month months week weeks quarter day days time morning afternoon "
    "evening weekend"
)
# "Is it possible to ...", "How long does it take to ...": "it" points at nothing.
DUMMY_IT = re.compile(
    r"\bit\s+(?:is\s+|was\s+|'s\s+|will\s+be\s+|would\s+be\s+)?"
    r"(?:possible|necessary|true|allowed|ok|okay|required|mandatory|permitted|"
    r"important|better|best|likely|safe|legal|normal|common|hard|easy|enough|"
    r"time)\s+(?:to|that|for)\b|\bit\s+takes?\b|\b(?:seems?|looks?)\s+like\b",
    re.IGNORECASE,
)
