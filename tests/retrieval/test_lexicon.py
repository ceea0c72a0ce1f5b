"""The answerer's lexicon: one year pattern, one IDF, word sets per reader."""

from __future__ import annotations

import re

from retrieval.lexicon import WIDE_YEAR_DIGITS, YEAR, en, idf, zh


def test_a_year_is_1900_to_2099_standing_alone():
    assert YEAR.findall("FY2019 vs 1999, not 12019 or 1850") == ["2019", "1999"]
    assert re.fullmatch(WIDE_YEAR_DIGITS, "1850")


def test_idf_is_never_negative_and_rarer_weighs_more():
    assert idf(10, 10) > 0
    assert idf(10, 1) > idf(10, 5)


def test_the_stopword_sets_differ_by_reader():
    # "long" (long-term), "it" (IT) and "may" (May) name things in a search.
    for word in ("long", "it", "may"):
        assert word in en.ANSWER_STOPWORDS
        assert word not in en.SEARCH_QUESTION_WORDS
    # Follow-ups also drop a conversation's courtesy words.
    assert "thanks" in en.FOLLOWUP_STOPWORDS - en.ANSWER_STOPWORDS
    assert "谢谢" in zh.FOLLOWUP_STOPWORDS - zh.ANSWER_STOPWORDS


def test_a_numeral_in_a_word_is_no_number():
    not_a_number = re.compile(rf"{en.NOT_A_NUMBER}|{zh.NOT_A_NUMBER}")
    assert not_a_number.search("一般")
    assert not_a_number.search("One of the reasons")
    assert not not_a_number.search("一分钟")
