"""check_claims with calculations: a computed number stands only when recomputed
from numbers the cited sources hold."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from answers.calculator import calculate, describe, parse_number
from answers.checker import check_claims, signed_numbers_in
from answers.types import Calculation, Claim, Operand, Operation, Source


def source(source_id: str, text: str) -> Source:
    return Source(
        id=source_id,
        document_id=None,
        document_version=1,
        knowledge_base_id="kb",
        filename="f.md",
        heading_path=[],
        page=None,
        text=text,
    )


SOURCES = [
    source(
        "S1",
        "Item | 2019 | 2018\n"
        "Net revenue | 1,250 | 1,100\n"
        "Operating loss | (3,990) | (2,100)\n"
        "Margin change | −12.6% | 4.5%\n"
        "Segments | 2,664 | 909",
    ),
    source("S2", "Employees: 4,411 in 2019 and 4,044 in 2018."),
    source(
        "S3", "Of 6,316 customers, 2,493 renewed. Offices: 6 in Europe, 15 in Asia."
    ),
]


def operand(text: str, source_id: str = "S1", label: str = "") -> Operand:
    return Operand(parse_number(text), source_id, label, text)


def claim(text: str, ids: list[str], calculation: Calculation | None) -> Claim:
    return Claim(text=text, source_ids=ids, calculation=calculation)


def kept(*claims: Claim) -> list[str]:
    return [claim.text for claim in check_claims(claims, SOURCES)]


def stated(calculation: Calculation, ids=("S1",), prefix="") -> Claim:
    """A claim that says its calculation in words, as the issue asks."""
    return claim(prefix + describe(calculation), list(ids), calculation)


CHANGE = calculate("change", [operand("1,100"), operand("1,250")], 0)


class TestEveryOperation:
    @pytest.mark.parametrize(
        ("calculation", "ids", "words"),
        [
            (CHANGE, ["S1"], "1,250 − 1,100 = 150"),
            (
                calculate("percentage_change", [operand("1,100"), operand("1,250")]),
                ["S1"],
                "(1,250 − 1,100) / 1,100 × 100 = 13.64%",
            ),
            (
                calculate("difference", [operand("1,250"), operand("1,100")], 0),
                ["S1"],
                "1,250 − 1,100 = 150",
            ),
            (
                calculate("sum", [operand("6", "S3"), operand("15", "S3")], 0),
                ["S3"],
                "6 + 15 = 21",
            ),
            (
                calculate(
                    "average", [operand("4,411", "S2"), operand("4,044", "S2")], 1
                ),
                ["S2"],
                "(4,411 + 4,044) / 2 = 4,227.5",
            ),
            (
                calculate("ratio", [operand("2,664"), operand("909")]),
                ["S1"],
                "2,664 / 909 = 2.93",
            ),
            (
                calculate(
                    "percentage", [operand("2,493", "S3"), operand("6,316", "S3")]
                ),
                ["S3"],
                "2,493 / 6,316 × 100 = 39.47%",
            ),
            (
                calculate(
                    "count",
                    [
                        operand("4,411", "S2"),
                        operand("4,044", "S2"),
                        operand("6,316", "S3"),
                    ],
                    0,
                ),
                ["S2", "S3"],
                "3",
            ),
        ],
    )
    def test_a_calculation_that_holds_is_kept(self, calculation, ids, words):
        text = f"Computed: {words}"
        (checked,) = check_claims([claim(text, ids, calculation)], SOURCES)
        assert checked.text == text
        assert checked.calculation == calculation

    def test_operands_from_two_cited_sources(self):
        calculation = calculate(
            "sum", [operand("1,250", "S1"), operand("4,411", "S2")], 0
        )
        assert describe(calculation) == "1,250 + 4,411 = 5,661"
        assert kept(stated(calculation, ["S1", "S2"])) == ["1,250 + 4,411 = 5,661"]


class TestWhatIsDropped:
    def test_the_result_without_a_calculation(self):
        assert kept(claim("1,250 − 1,100 = 150", ["S1"], None)) == []
        assert kept(claim("Net revenue grew 13.64%.", ["S1"], None)) == []

    def test_a_wrong_result(self):
        wrong = replace(CHANGE, result=Decimal(160))
        assert kept(claim("1,250 − 1,100 = 160", ["S1"], wrong)) == []

    def test_a_wrong_result_is_never_fixed(self):
        # The words are right, the calculation is not: the claim goes.
        wrong = replace(CHANGE, result=Decimal(160))
        assert kept(claim("1,250 − 1,100 = 150", ["S1"], wrong)) == []
        # Even when the words need no calculation at all.
        assert kept(claim("Net revenue was 1,250 in 2019.", ["S1"], wrong)) == []

    def test_words_that_state_another_result(self):
        assert kept(claim("1,250 − 1,100 = 151", ["S1"], CHANGE)) == []
        assert kept(claim("It changed by 150, or 12%.", ["S1"], CHANGE)) == []

    def test_an_operand_from_an_uncited_source(self):
        calculation = calculate(
            "average", [operand("4,411", "S2"), operand("4,044", "S2")], 1
        )
        assert kept(stated(calculation, ["S1"])) == []
        assert kept(stated(calculation, ["S2"])) == ["(4,411 + 4,044) / 2 = 4,227.5"]

    def test_an_operand_from_an_unknown_source(self):
        calculation = calculate("sum", [operand("1,250"), operand("6", "S9")], 0)
        assert kept(stated(calculation, ["S1", "S3"])) == []

    def test_an_operand_its_source_does_not_hold(self):
        calculation = calculate("change", [operand("1,100"), operand("1,300")], 0)
        assert kept(stated(calculation)) == []

    def test_an_operand_held_by_another_cited_source(self):
        # 4,411 is in S2, but the operand says it was read in S1.
        calculation = calculate("sum", [operand("1,250"), operand("4,411", "S1")], 0)
        assert kept(stated(calculation, ["S1", "S2"])) == []

    def test_a_number_is_matched_whole(self):
        # 125 is not in "1,250".
        calculation = calculate("change", [operand("125"), operand("1,250")], 0)
        assert kept(stated(calculation)) == []

    def test_an_operand_whose_text_is_not_its_value(self):
        # `describe` prints the text, so it may not say another number.
        lying = Operand(Decimal(1250), "S1", "Net revenue 2019", "9,999")
        calculation = calculate("change", [operand("1,100"), lying], 0)
        assert kept(claim("9,999 − 1,100 = 150", ["S1"], calculation)) == []
        assert kept(claim("Net revenue rose by 150.", ["S1"], calculation)) == []

    @pytest.mark.parametrize(
        "calculation",
        [
            Calculation(Operation.CHANGE, (operand("1,250"),), Decimal(0), 0),
            Calculation(
                Operation.RATIO, (operand("1,250"), operand("0")), Decimal(0), 0
            ),
            Calculation(Operation.CHANGE, CHANGE.operands, Decimal(150), -1),
            Calculation("median", CHANGE.operands, Decimal(150), 0),  # type: ignore[arg-type]
        ],
    )
    def test_a_calculation_that_cannot_be_done(self, calculation):
        assert kept(claim("Net revenue was 1,250.", ["S1"], calculation)) == []

    def test_claims_without_a_calculation_keep_the_old_rule(self):
        assert kept(
            claim("Net revenue was 1,250 in 2019.", ["S1"], None),
            claim("Net revenue was 1,300 in 2019.", ["S1"], None),
        ) == ["Net revenue was 1,250 in 2019."]


class TestRounding:
    def test_the_result_only_at_its_rounding(self):
        calculation = calculate(
            "percentage_change", [operand("1,100"), operand("1,250")]
        )
        assert calculation.result == Decimal("13.64")
        assert kept(claim("Net revenue grew 13.64%.", ["S1"], calculation)) == [
            "Net revenue grew 13.64%."
        ]
        # Trailing zeros are the same number.
        assert kept(claim("Net revenue grew 13.640%.", ["S1"], calculation)) == [
            "Net revenue grew 13.640%."
        ]
        for other in ("13.6", "13.636", "14", "13.63"):
            assert kept(claim(f"Net revenue grew {other}%.", ["S1"], calculation)) == []

    def test_the_calculation_says_its_rounding(self):
        one_place = calculate(
            "percentage_change", [operand("1,100"), operand("1,250")], 1
        )
        assert one_place.result == Decimal("13.6")
        assert kept(claim("Net revenue grew 13.6%.", ["S1"], one_place)) == [
            "Net revenue grew 13.6%."
        ]
        claimed = Calculation(
            Operation.PERCENTAGE_CHANGE, one_place.operands, Decimal("13.6"), 2
        )
        assert kept(claim("Net revenue grew 13.6%.", ["S1"], claimed)) == []

    def test_half_away_from_zero(self):
        # (4,411 + 4,044) / 2 = 4,227.5 rounds to 4,228, not to the even 4,227.
        calculation = calculate(
            "average", [operand("4,411", "S2"), operand("4,044", "S2")], 0
        )
        assert calculation.result == Decimal(4228)
        assert kept(stated(calculation, ["S2"])) == ["(4,411 + 4,044) / 2 = 4,228"]
        banker = replace(calculation, result=Decimal(4227))
        assert kept(claim("About 4,227 employees.", ["S2"], banker)) == []


class TestIntermediateNumbers:
    def test_the_count_of_an_average(self):
        calculation = calculate(
            "average", [operand("4,411", "S2"), operand("4,044", "S2")], 1
        )
        text = "Average headcount: (4,411 + 4,044) / 2 = 4,227.5"
        # Neither "2" nor 4,227.5 is in S2: the calculation makes them.
        assert kept(claim(text, ["S2"], None)) == []
        assert kept(claim(text, ["S2"], calculation)) == [text]
        assert kept(claim("(4,411 + 4,044) / 3 = 4,227.5", ["S2"], calculation)) == []

    def test_the_hundred_of_a_percentage(self):
        calculation = calculate(
            "percentage", [operand("2,493", "S3"), operand("6,316", "S3")]
        )
        assert kept(stated(calculation, ["S3"])) == ["2,493 / 6,316 × 100 = 39.47%"]

    def test_numbers_the_calculation_does_not_print(self):
        # The unrounded quotient is no intermediate of the words.
        calculation = calculate("ratio", [operand("2,664"), operand("909")])
        assert kept(claim("2,664 / 909 = 2.930693", ["S1"], calculation)) == []


class TestSigns:
    def test_a_bracketed_number_is_negative(self):
        calculation = calculate("change", [operand("(2,100)"), operand("(3,990)")], 0)
        assert calculation.result == Decimal(-1890)
        assert describe(calculation) == "(3,990) − (2,100) = -1,890"
        assert kept(stated(calculation, prefix="Operating loss grew: ")) == [
            "Operating loss grew: (3,990) − (2,100) = -1,890"
        ]
        # The claim may write the negative result with a U+2212 minus too.
        assert kept(claim("Operating loss moved by −1,890.", ["S1"], calculation)) == [
            "Operating loss moved by −1,890."
        ]

    def test_a_sign_the_source_does_not_give_is_dropped(self):
        flipped = [
            Operand(Decimal(-2100), "S1", "", ""),
            Operand(Decimal(3990), "S1", "", ""),  # the source says (3,990)
        ]
        assert kept(stated(calculate("change", flipped, 0))) == []
        negative_revenue = [operand("1,100"), Operand(Decimal(-1250), "S1", "", "")]
        assert kept(stated(calculate("change", negative_revenue, 0))) == []

    def test_minus_signs(self):
        # The source writes "−12.6%" with U+2212.
        calculation = calculate("difference", [operand("4.5"), operand("-12.6")], 1)
        assert describe(calculation) == "4.5 − (-12.6) = 17.1"
        assert kept(stated(calculation)) == ["4.5 − (-12.6) = 17.1"]
        written = calculate("difference", [operand("4.5"), operand("−12.6%")], 1)
        assert kept(stated(written)) == ["4.5 − (−12.6%) = 17.1"]

    def test_signed_numbers_in(self):
        assert signed_numbers_in(
            "Loss (3,990); −12.6; -5%; $-7; -$8; ( $9 ); (12.5%); 2018-2019; "
            "- 13 as a list item; (see note 14); x-15; １，０００"
        ) == {
            Decimal(-3990),
            Decimal("-12.6"),
            Decimal(-5),
            Decimal(-7),
            Decimal(-8),
            Decimal(-9),
            Decimal("-12.5"),
            Decimal(2018),
            Decimal(2019),
            Decimal(13),
            Decimal(14),
            Decimal(15),
            Decimal(1000),
        }


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("sNaN"), Decimal("Inf")])
def test_an_operand_that_is_no_number(value):
    counted = (Operand(value, "S1", "", ""), operand("1,250"))
    calculation = Calculation(Operation.COUNT, counted, Decimal(2), 0)
    assert kept(claim("Two values.", ["S1"], calculation)) == []
