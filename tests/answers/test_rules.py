"""Every rule of the answerer matches its examples and none of its
counter-examples; `ablated` switches rules off and back on."""

from __future__ import annotations

import pytest

from answers import rules
from answers.question import analyse

CASES = [
    pytest.param(rule, text, True, id=f"{rule.name}: {text}")
    for rule in rules.RULES
    for text in rule.examples
] + [
    pytest.param(rule, text, False, id=f"{rule.name} not: {text}")
    for rule in rules.RULES
    for text in rule.counter_examples
]


@pytest.mark.parametrize(("rule", "text", "matches"), CASES)
def test_a_rule_matches_its_examples_and_not_its_counter_examples(rule, text, matches):
    assert bool(rule.pattern.search(text)) is matches


def test_every_rule_has_examples_and_counter_examples():
    for rule in rules.RULES:
        assert rule.examples, rule.name
        assert rule.counter_examples, rule.name
    assert len(set(rules.RULE_NAMES)) == len(rules.RULES)


def test_a_rule_ablated_is_off_for_the_block_only():
    question = "How do I request leave?"
    assert analyse(question).asks("asks-procedure")
    with rules.ablated("asks-procedure"):
        assert not analyse(question).asks("asks-procedure")
        assert rules.switched_off() == {"asks-procedure"}
    assert analyse(question).asks("asks-procedure")


def test_an_answer_kind_ablated_leaves_the_next_kind_that_matches():
    question = "Why and where did sales fall?"
    assert analyse(question).answer_kind == "place"  # time, place, reason, alias
    with rules.ablated("asks-place"):
        assert analyse(question).answer_kind == "reason"


def test_an_unknown_rule_is_refused_with_the_names():
    with pytest.raises(rules.UnknownRule, match="asks-number"), rules.ablated("nope"):
        pass
    with pytest.raises(KeyError):
        analyse("How many?").asks("nope")
