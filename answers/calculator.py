"""Calculations a claim may carry: computed exactly, recomputed, put in words.

Pure Python, no Django. A provider builds a calculation with `calculate()` (or
proposes one, as an LLM does); the checker believes it only when `holds()` gets
the same result from the operands, and `describe()` says it the way a claim does:
"1,250 − 1,100 = 150".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

from core.text import NUMBER

from .types import Calculation, Operand, Operation

MAX_DECIMALS = 10
# Far more digits than any result keeps, so a quotient is exact where it matters.
_CONTEXT = Context(prec=60)
_TWO_OPERANDS = frozenset(
    {
        Operation.CHANGE,
        Operation.PERCENTAGE_CHANGE,
        Operation.DIFFERENCE,
        Operation.RATIO,
        Operation.PERCENTAGE,
    }
)
_PERCENT_RESULT = frozenset({Operation.PERCENTAGE_CHANGE, Operation.PERCENTAGE})


class CalculationError(ValueError):
    """A calculation that cannot be done: a zero divisor, too few or too many
    operands, an unknown operation or an unusable number of decimals."""


def compute(operation: Operation | str, values: Sequence[Decimal]) -> Decimal:
    """The exact result of `operation` over `values`, in the order `Operation` says."""
    operation = _operation(operation)
    values = list(values)
    _check_arity(operation, len(values))
    if operation is Operation.COUNT:
        return Decimal(len(values))
    if not all(isinstance(value, Decimal) and value.is_finite() for value in values):
        raise CalculationError("Every operand must be a finite Decimal.")
    first, last = values[0], values[-1]
    with localcontext(_CONTEXT):
        match operation:
            case Operation.CHANGE:
                return last - first
            case Operation.PERCENTAGE_CHANGE:
                return (last - first) / _divisor(first) * 100
            case Operation.DIFFERENCE:
                return first - last
            case Operation.SUM:
                return sum(values, Decimal(0))
            case Operation.AVERAGE:
                return sum(values, Decimal(0)) / len(values)
            case Operation.RATIO:
                return first / _divisor(last)
            case Operation.PERCENTAGE:
                return first / _divisor(last) * 100
    raise AssertionError(operation)  # pragma: no cover - every operation is above


def rounded(value: Decimal, decimals: int) -> Decimal:
    """`value` rounded half away from zero to `decimals` places (never "-0")."""
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise CalculationError("Decimals must be a whole number.")
    if not 0 <= decimals <= MAX_DECIMALS:
        raise CalculationError(f"Decimals must be between 0 and {MAX_DECIMALS}.")
    with localcontext(_CONTEXT):
        result = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return result.copy_abs() if result.is_zero() else result


def calculate(
    operation: Operation | str, operands: Sequence[Operand], decimals: int = 2
) -> Calculation:
    """The calculation over `operands`, its result rounded to `decimals` places."""
    operands = tuple(operands)
    result = compute(operation, [operand.value for operand in operands])
    return Calculation(
        operation=_operation(operation),
        operands=operands,
        result=rounded(result, decimals),
        decimals=decimals,
    )


def holds(calculation: Calculation) -> bool:
    """Whether the operands give `result` again, rounded to its `decimals`."""
    try:
        expected = rounded(
            compute(
                calculation.operation,
                [operand.value for operand in calculation.operands],
            ),
            calculation.decimals,
        )
    except CalculationError:
        return False
    result = calculation.result
    return isinstance(result, Decimal) and result.is_finite() and result == expected


_CURRENCY = r"(?:US\$|HK\$|[$€£¥₹]|[A-Z]{3})"
_WRITTEN_NUMBER = re.compile(
    rf"""
    (?P<currency_before_open>{_CURRENCY}\s*)?
    (?P<open>\(\s*)?
    (?P<currency>{_CURRENCY}\s*)?
    (?P<sign>[-+])?
    (?P<currency_after_sign>{_CURRENCY}\s*)?
    (?P<digits>{NUMBER}|\.\d+)
    (?P<percent>\s*%)?
    (?P<close>\s*\))?
    (?P<percent_after_close>\s*%)?
    # Scale words stay in the claim's words: "1.2 million" is the number 1.2.
    (?:\s*(?:(?i:thousand|million|billion|trillion)|百万|千万|千|万|亿))?
    (?P<currency_after>\s*{_CURRENCY})?
    """,
    re.VERBOSE,
)


_SPACED_DIGITS = re.compile(r"(?<=\b\d) (?=\d\b)")


def join_spaced_digits(text: str) -> str:
    """Letter-spaced digits joined: "2 0 1 8" in a table header is 2018."""
    return _SPACED_DIGITS.sub("", text)


def parse_number(text: str) -> Decimal | None:
    """The number a financial table writes as `text`, or None when it is not one.

    "1,250", "$ 1,452.4", "12.5%", "−12.6" and "-12.6", "(3,990)" (= −3990),
    fullwidth digits; a dash alone ("—", "-") is an empty cell, not a number.
    """
    if not isinstance(text, str):
        return None
    text = unicodedata.normalize("NFKC", text).strip().replace("\u2212", "-")
    match = _WRITTEN_NUMBER.fullmatch(text)
    if match is None:
        return None
    parts = match.groupdict()
    if (
        bool(parts["open"]) != bool(parts["close"])
        or (parts["open"] and parts["sign"])
        or (parts["percent"] and parts["percent_after_close"])
        or sum(bool(parts[key]) for key in parts if key.startswith("currency")) > 1
    ):
        return None
    value = Decimal(parts["digits"].replace(",", ""))
    if parts["open"] or parts["sign"] == "-":
        value = -value
    return value.copy_abs() if value.is_zero() else value


def describe(calculation: Calculation) -> str:
    """The calculation in a claim's words: "(4,411 + 4,044) / 2 = 4,227.5"."""
    operation = _operation(calculation.operation)
    _check_arity(operation, len(calculation.operands))
    terms = [_term(operand) for operand in calculation.operands]
    result = format_number(calculation.result, calculation.decimals)
    if operation in _PERCENT_RESULT:
        result += "%"
    first, last = terms[0], terms[-1]
    match operation:
        case Operation.CHANGE:
            return f"{last} − {first} = {result}"
        case Operation.PERCENTAGE_CHANGE:
            return f"({last} − {first}) / {first} × 100 = {result}"
        case Operation.DIFFERENCE:
            return f"{first} − {last} = {result}"
        case Operation.SUM:
            return f"{' + '.join(terms)} = {result}"
        case Operation.AVERAGE:
            return f"({' + '.join(terms)}) / {len(terms)} = {result}"
        case Operation.RATIO:
            return f"{first} / {last} = {result}"
        case Operation.PERCENTAGE:
            return f"{first} / {last} × 100 = {result}"
        case Operation.COUNT:
            return result
    raise AssertionError(operation)  # pragma: no cover - every operation is above


def format_number(value: Decimal, decimals: int) -> str:
    """`value` at `decimals` places with thousands separators, trailing zeros
    dropped and an ASCII "-": "4,227.5", "-150"."""
    text = format(rounded(value, decimals), ",f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _operation(operation: Operation | str) -> Operation:
    try:
        return Operation(operation)
    except ValueError:
        raise CalculationError(f"Unknown operation {operation!r}.") from None


def _check_arity(operation: Operation, count: int) -> None:
    if operation in _TWO_OPERANDS and count != 2:
        raise CalculationError(f"{operation} needs exactly 2 operands, not {count}.")
    if operation in (Operation.SUM, Operation.AVERAGE) and count < 2:
        raise CalculationError(f"{operation} needs at least 2 operands, not {count}.")
    if count < 1:
        raise CalculationError(f"{operation} needs at least 1 operand.")


def _divisor(value: Decimal) -> Decimal:
    if value.is_zero():
        raise CalculationError("Division by zero.")
    return value


def _term(operand: Operand) -> str:
    """The operand as its source writes it; a signed one in parentheses, so that
    "5 − (-3)" does not read as "5 − -3"."""
    text = operand.text.strip() or format(operand.value, ",f")
    return f"({text})" if text[0] in "+-−" else text
