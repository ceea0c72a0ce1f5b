"""Every measure's examples and counter-examples (pure, no database)."""

from __future__ import annotations

import pytest

from answers.measures import MEASURES, asked_measures, says_measure

EXAMPLES = [
    pytest.param(measure, question, evidence, id=f"{measure.name}-{index}")
    for measure in MEASURES
    for index, (question, evidence) in enumerate(measure.examples)
]
COUNTER_EXAMPLES = [
    pytest.param(measure, question, evidence, id=f"{measure.name}-{index}")
    for measure in MEASURES
    for index, (question, evidence) in enumerate(measure.counter_examples)
]


@pytest.mark.parametrize(("measure", "question", "evidence"), EXAMPLES)
def test_an_example_asks_the_measure_and_its_evidence_says_it(
    measure, question, evidence
):
    assert measure in asked_measures(question)
    assert says_measure(evidence, asked_measures(question))


@pytest.mark.parametrize(("measure", "question", "evidence"), COUNTER_EXAMPLES)
def test_a_counter_example_says_another_quantity(measure, question, evidence):
    assert measure in asked_measures(question)
    assert not says_measure(evidence, asked_measures(question))


def test_every_measure_has_examples_and_counter_examples():
    assert all(m.examples and m.counter_examples for m in MEASURES)


@pytest.mark.parametrize(
    "question",
    [
        "How many respondents put SSRF first?",  # a count: any number says it
        "How long is the password?",  # a length, not a time
        "What is the capital of France?",
        "Broker 默认在哪个端口上接收客户端连接？",
    ],
)
def test_questions_naming_no_measure(question):
    assert asked_measures(question) == ()
    assert says_measure("anything at all", ())
