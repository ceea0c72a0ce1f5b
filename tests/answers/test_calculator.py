"""The calculator: exact arithmetic, rounding, numbers as tables write them, words."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from answers.calculator import (
    CalculationError,
    calculate,
    compute,
    describe,
    holds,
    parse_number,
    rounded,
)
from answers.types import Calculation, Operand, Operation


def operand(text: str, source_id: str = "S1", label: str = "") -> Operand:
    value = parse_number(text)
    assert value is not None, text
    return Operand(value=value, source_id=source_id, label=label, text=text)


def values(*texts: str) -> list[Decimal]:
    return [Decimal(text) for text in texts]


class TestCompute:
    @pytest.mark.parametrize(
        ("operation", "operands", "result"),
        [
            ("change", ["1100", "1250"], "150"),
            ("change", ["1250", "1100"], "-150"),
            ("difference", ["1250", "1100"], "150"),
            ("difference", ["-3990", "1250"], "-5240"),
            ("sum", ["6", "15"], "21"),
            ("sum", ["0.1", "0.2", "0.3"], "0.6"),  # exact, unlike floats
            ("average", ["4411", "4044"], "4227.5"),
            ("ratio", ["3", "4"], "0.75"),
            ("percentage", ["1", "8"], "12.5"),
            ("percentage_change", ["1000", "1250"], "25"),
            ("percentage_change", ["1250", "1000"], "-20"),
            ("percentage_change", ["-2100", "-3990"], "90"),
            ("count", ["7", "7", "-1"], "3"),
        ],
    )
    def test_every_operation(self, operation, operands, result):
        assert compute(Operation(operation), values(*operands)) == Decimal(result)

    def test_quotients_keep_far_more_places_than_any_rounding(self):
        ratio = compute("ratio", values("2664", "909"))
        assert rounded(ratio, 10) == Decimal("2.9306930693")
        change = compute("percentage_change", values("1100", "1250"))
        assert rounded(change, 10) == Decimal("13.6363636364")

    def test_a_string_names_the_operation_too(self):
        assert compute("sum", values("1", "2")) == 3

    @pytest.mark.parametrize(
        ("operation", "operands", "message"),
        [
            ("ratio", ["1", "0"], "Division by zero"),
            ("percentage", ["1", "0.00"], "Division by zero"),
            ("percentage_change", ["0", "5"], "Division by zero"),
            ("change", ["1"], "exactly 2 operands, not 1"),
            ("difference", ["1", "2", "3"], "exactly 2 operands, not 3"),
            ("ratio", [], "exactly 2 operands, not 0"),
            ("sum", ["1"], "at least 2 operands"),
            ("average", [], "at least 2 operands"),
            ("count", [], "at least 1 operand"),
            ("median", ["1", "2"], "Unknown operation 'median'"),
        ],
    )
    def test_impossible_inputs_are_calculation_errors(
        self, operation, operands, message
    ):
        with pytest.raises(CalculationError, match=message):
            compute(operation, values(*operands))

    @pytest.mark.parametrize("bad", [Decimal("NaN"), Decimal("Infinity"), 1.5])
    def test_operands_are_finite_decimals(self, bad):
        with pytest.raises(CalculationError, match="finite Decimal"):
            compute("sum", [Decimal(1), bad])


class TestRounded:
    @pytest.mark.parametrize(
        ("value", "decimals", "expected"),
        [
            ("2.345", 2, "2.35"),
            ("-2.345", 2, "-2.35"),  # half away from zero, both ways
            ("2.5", 0, "3"),
            ("-2.5", 0, "-3"),
            ("3.5", 0, "4"),  # not banker's rounding
            ("2.344", 2, "2.34"),
            ("150", 2, "150.00"),
            ("-0.004", 2, "0.00"),  # never "-0"
        ],
    )
    def test_half_away_from_zero(self, value, decimals, expected):
        result = rounded(Decimal(value), decimals)
        assert str(result) == expected

    @pytest.mark.parametrize("decimals", [-1, 11, 1.5, True, "2"])
    def test_decimals_are_a_small_whole_number(self, decimals):
        with pytest.raises(CalculationError, match="Decimals"):
            rounded(Decimal(1), decimals)


class TestCalculate:
    def test_the_result_is_rounded(self):
        calculation = calculate(
            Operation.PERCENTAGE_CHANGE, [operand("1,100"), operand("1,250")]
        )
        assert calculation == Calculation(
            operation=Operation.PERCENTAGE_CHANGE,
            operands=(operand("1,100"), operand("1,250")),
            result=Decimal("13.64"),
            decimals=2,
        )
        assert holds(calculation)

    def test_decimals(self):
        calculation = calculate("ratio", [operand("2,664"), operand("909")], 4)
        assert calculation.result == Decimal("2.9307")
        assert calculation.operation is Operation.RATIO

    def test_impossible_inputs_raise(self):
        with pytest.raises(CalculationError):
            calculate("ratio", [operand("5"), operand("0")])
        with pytest.raises(CalculationError):
            calculate("ratio", [operand("5"), operand("1")], decimals=-1)


class TestHolds:
    def right(self) -> Calculation:
        return calculate("percentage_change", [operand("1,100"), operand("1,250")])

    def with_(self, **changes) -> Calculation:
        fields = {
            "operation": Operation.PERCENTAGE_CHANGE,
            "operands": (operand("1,100"), operand("1,250")),
            "result": Decimal("13.64"),
            "decimals": 2,
        }
        return Calculation(**{**fields, **changes})

    def test_a_right_calculation_holds(self):
        assert holds(self.right())
        assert holds(self.with_(result=Decimal("13.640")))  # same number

    @pytest.mark.parametrize(
        "changes",
        [
            {"result": Decimal("13.65")},
            {"result": Decimal("13.6")},  # not at its rounding
            {"result": Decimal("13.6364")},  # more places than it says
            {"result": Decimal("13.64"), "decimals": 1},
            {"result": Decimal("-13.64")},
            {"result": Decimal("NaN")},
            {"operation": Operation.CHANGE},
            {"operands": (operand("1,250"), operand("1,100"))},  # order matters
            {"operands": (operand("1,100"),)},
            {"operands": (operand("0"), operand("1,250"))},
            {"decimals": 99},
            {"operation": "median"},
        ],
    )
    def test_anything_else_does_not(self, changes):
        assert not holds(self.with_(**changes))

    def test_at_its_decimals(self):
        assert holds(self.with_(result=Decimal("13.6"), decimals=1))
        assert holds(self.with_(result=Decimal("14"), decimals=0))

    def test_count(self):
        counted = (operand("600"), operand("450"), operand("100"))
        assert holds(Calculation(Operation.COUNT, counted, Decimal(3), 0))
        assert not holds(Calculation(Operation.COUNT, counted, Decimal(2), 0))


class TestParseNumber:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1,250", "1250"),
            ("1250", "1250"),
            ("$ 1,452.4", "1452.4"),
            ("$1,452.4", "1452.4"),
            ("US$ 5", "5"),
            ("€12", "12"),
            ("1,000 EUR", "1000"),
            ("(3,990)", "-3990"),
            ("( 3,990 )", "-3990"),
            ("$ (3,990)", "-3990"),
            ("($3,990)", "-3990"),
            ("(12.5%)", "-12.5"),
            ("−12.6", "-12.6"),  # U+2212 MINUS SIGN
            ("-12.6", "-12.6"),
            ("-$12.6", "-12.6"),
            ("$-12.6", "-12.6"),
            ("+4.5", "4.5"),
            ("12.5%", "12.5"),
            ("12.5 %", "12.5"),
            ("１，２５０", "1250"),  # fullwidth, NFKC
            ("１２.５％", "12.5"),
            ("1.2 million", "1.2"),  # the scale word is the claim's text
            ("3 Billion", "3"),
            ("1.5 万", "1.5"),
            ("0.5", "0.5"),
            (".5", "0.5"),
            ("  7  ", "7"),
            ("-0", "0"),
        ],
    )
    def test_numbers_as_tables_write_them(self, text, expected):
        value = parse_number(text)
        assert value == Decimal(expected)
        assert str(value) == expected

    @pytest.mark.parametrize(
        "text",
        [
            "—",
            "–",
            "-",
            "",
            "   ",
            "n/a",
            "1,25",  # not a thousands group
            "1,2500",
            "12 days",
            "(3,990",
            "3,990)",
            "(-3,990)",
            "12%%",
            "1.2.3",
            "$$5",
            "2018-2019",
            "1,250 − 1,100",
        ],
    )
    def test_what_is_not_a_number(self, text):
        assert parse_number(text) is None

    def test_not_a_string(self):
        assert parse_number(None) is None  # type: ignore[arg-type]
        assert parse_number(12) is None  # type: ignore[arg-type]


class TestDescribe:
    @pytest.mark.parametrize(
        ("operation", "operands", "decimals", "words"),
        [
            ("change", ["1,100", "1,250"], 0, "1,250 − 1,100 = 150"),
            (
                "percentage_change",
                ["1,100", "1,250"],
                2,
                "(1,250 − 1,100) / 1,100 × 100 = 13.64%",
            ),
            ("difference", ["1,250", "1,100"], 0, "1,250 − 1,100 = 150"),
            ("average", ["4,411", "4,044"], 2, "(4,411 + 4,044) / 2 = 4,227.5"),
            ("sum", ["6", "15"], 0, "6 + 15 = 21"),
            ("sum", ["$ 1,452.4", "12"], 1, "$ 1,452.4 + 12 = 1,464.4"),
            ("ratio", ["2,664", "909"], 2, "2,664 / 909 = 2.93"),
            ("percentage", ["2,493", "6,316"], 2, "2,493 / 6,316 × 100 = 39.47%"),
            ("count", ["600", "450", "100"], 0, "3"),
            ("change", ["1,250", "1,100"], 2, "1,100 − 1,250 = -150"),
            ("difference", ["(3,990)", "1,250"], 0, "(3,990) − 1,250 = -5,240"),
            ("change", ["-12.6", "4.5"], 1, "4.5 − (-12.6) = 17.1"),
            ("average", ["1", "2", "2"], 2, "(1 + 2 + 2) / 3 = 1.67"),
            ("sum", ["1,000,000", "250,000"], 2, "1,000,000 + 250,000 = 1,250,000"),
        ],
    )
    def test_words_of_a_claim(self, operation, operands, decimals, words):
        calculation = calculate(operation, [operand(t) for t in operands], decimals)
        assert describe(calculation) == words

    def test_an_operand_without_text_is_written_from_its_value(self):
        calculation = calculate(
            "sum", [Operand(Decimal("1250"), "S1", "", ""), operand("5")], 0
        )
        assert describe(calculation) == "1,250 + 5 = 1,255"

    def test_a_wrong_operand_count_cannot_be_described(self):
        calculation = Calculation(
            Operation.CHANGE, (operand("1"),), Decimal("0"), decimals=0
        )
        with pytest.raises(CalculationError):
            describe(calculation)


def test_renumbered_renames_the_operands_sources():
    calculation = calculate("sum", [operand("1", "S2"), operand("2", "S5")], 0)
    renumbered = calculation.renumbered({"S2": "S1", "S5": "S2", "S9": "S3"})
    assert [o.source_id for o in renumbered.operands] == ["S1", "S2"]
    assert renumbered.operands[0] == replace(calculation.operands[0], source_id="S1")
    assert (renumbered.result, renumbered.decimals) == (Decimal(3), 0)
    assert holds(renumbered)
