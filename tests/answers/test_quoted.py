"""A term the question quotes must be named by the unit that answers
(`answers.quoted`), and an address asked for must be written in the
answer (`measures.ADDRESSES`)."""

from __future__ import annotations

import pytest

from answers.extractive import ExtractiveChat
from answers.quoted import holds_quoted, quoted_terms
from tests.answers.test_table_lookup import source

DATA = """\
The ranking of incidence was used for the prevalence calculation in the overall \
risk rating.

For 2017, the incidence rate was calculated by how many applications in a given \
data set had one or more of a specific vulnerability type.
"""

FORM = """\
Complete this form if you are applying for the initial issue of an operator's \
certificate.

Attach your manuals to the application.
"""


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("How was 'incidence rate' defined?", ("incidence rate",)),
        ('What does "Sev 1" mean here?', ("sev 1",)),
        ("“梦野久作”这个笔名有什么由来？", ("梦野久作",)),
        ("谁称黄衫女子为「杨姊姊」？", ("杨姊姊",)),
        # Apostrophes open no quote.
        ("What's the rate? Don't guess, it's 'the' rate", ("the",)),
        ("What's the employee's leave? It's fine", ()),
        ("Which of the rules in 《劳动合同法》 applies?", ()),
    ],
)
def test_quoted_terms(question, terms):
    assert quoted_terms(question) == terms


def test_a_quoted_term_is_held_folded():
    assert holds_quoted("The  Incidence\nRate was", ("incidence rate",))
    assert not holds_quoted("The ranking of incidence was", ("incidence rate",))
    assert holds_quoted("anything", ())


def answer(question: str, text: str) -> list[str]:
    claims, _ = ExtractiveChat(min_score=0.3).draft(question, [source("S1", text)])
    return [claim.text for claim in claims]


def test_the_unit_naming_the_quoted_term_answers():
    (said,) = answer("How was 'incidence rate' defined for the 2017 data?", DATA)

    assert "how many applications" in said


def test_no_unit_naming_the_quoted_term_is_a_refusal():
    assert answer("How was 'exposure rate' defined for the 2017 data?", DATA) == []


def test_an_email_address_asked_is_not_answered_by_a_sentence_without_one():
    question = "Where do I email the completed operator's certificate application?"
    assert answer(question, FORM) == []
    with_address = FORM + "\nEmail the completed application to regs@casa.gov.au.\n"
    assert any("regs@casa.gov.au" in claim for claim in answer(question, with_address))
