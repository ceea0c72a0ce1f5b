"""The claim checker: a claim stands only on what its cited sources say.

A claim that carries a calculation may also state the numbers the calculation
makes (its result, the "/ 2" of an average), but only once the calculation is
recomputed from numbers its cited sources hold; a calculation that fails drops
the claim, whoever drafted it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from itertools import chain

from core.text import NUMBER

from .calculator import describe, holds, join_spaced_digits, parse_number
from .types import Calculation, Claim, Source

_NUMBER = re.compile(NUMBER)
# What may stand between a minus or an opening parenthesis and its number.
_CURRENCY_BEFORE = re.compile(r"(?:US\$|HK\$|[$€£¥₹])\s*$")
_CLOSES = re.compile(r"\s*%?\s*\)")


def numbers_in(text: str) -> set[str]:
    """Numbers written with digits, normalised: "1,000" and "１０００.0" are "1000";
    letter-spaced digits ("2 0 1 8") are also read as one number."""
    text = unicodedata.normalize("NFKC", text)
    found = set()
    for match in chain(
        _NUMBER.finditer(text), _NUMBER.finditer(join_spaced_digits(text))
    ):
        try:
            value = Decimal(match.group().replace(",", ""))
        except InvalidOperation:  # pragma: no cover - the pattern only matches digits
            continue
        found.add(format(value.normalize(), "f"))
    return found


def signed_numbers_in(text: str) -> set[Decimal]:
    """The numbers of `numbers_in` with the sign the text gives them.

    "-12.6", "−12.6", "$-5" and "(3,990)" are negative; the hyphen of a range or a
    date ("2018-2019") is not a sign.
    """
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    found = set()
    for match in _NUMBER.finditer(text):
        value = Decimal(match.group().replace(",", ""))
        start = match.start()
        before = _CURRENCY_BEFORE.sub("", text[max(0, start - 8) : start])
        minus = before.endswith("-") and not before[:-1][-1:].isalnum()
        bracketed = before.rstrip().endswith("(") and _CLOSES.match(text, match.end())
        found.add(-value if minus or bracketed else value)
    return found


def check_claims(claims: Sequence[Claim], sources: Sequence[Source]) -> list[Claim]:
    """The claims that cite only known sources and whose numbers those sources hold
    (or, for a claim with a calculation that holds, that calculation makes)."""
    by_id = {source.id: source for source in sources}
    kept = []
    for claim in claims:
        ids = list(dict.fromkeys(source_id.strip() for source_id in claim.source_ids))
        text = claim.text.strip()
        if not text or not ids or any(source_id not in by_id for source_id in ids):
            continue
        cited_numbers = set().union(*(numbers_in(by_id[i].text) for i in ids))
        if claim.calculation is not None:
            cited = {source_id: by_id[source_id] for source_id in ids}
            if not calculation_stands(claim.calculation, cited):
                continue
            cited_numbers |= numbers_in(describe(claim.calculation))
        if not numbers_in(text) <= cited_numbers:
            continue
        kept.append(replace(claim, text=text, source_ids=ids))
    return kept


def calculation_stands(calculation: Calculation, cited: Mapping[str, Source]) -> bool:
    """The result recomputed from the operands, and every operand read, with its
    sign, from a cited source that holds it (and written as its value)."""
    if not holds(calculation):
        return False
    for operand in calculation.operands:
        source = cited.get(operand.source_id)
        if (
            source is None
            or not isinstance(operand.value, Decimal)
            or not operand.value.is_finite()
            or operand.value not in signed_numbers_in(source.text)
        ):
            return False
        # `describe` prints the text: it must say the number the source holds.
        if operand.text.strip() and parse_number(operand.text) != operand.value:
            return False
    return True
