"""The claim checker: a claim stands only on what its cited sources say."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation

from .types import Claim, Source

_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def numbers_in(text: str) -> set[str]:
    """Numbers written with digits, normalised: "1,000" and "１０００.0" are "1000"."""
    found = set()
    for match in _NUMBER.finditer(unicodedata.normalize("NFKC", text)):
        try:
            value = Decimal(match.group().replace(",", ""))
        except InvalidOperation:  # pragma: no cover - the pattern only matches digits
            continue
        found.add(format(value.normalize(), "f"))
    return found


def check_claims(claims: Sequence[Claim], sources: Sequence[Source]) -> list[Claim]:
    """The claims that cite only known sources and whose numbers those sources hold."""
    by_id = {source.id: source for source in sources}
    kept = []
    for claim in claims:
        ids = list(dict.fromkeys(source_id.strip() for source_id in claim.source_ids))
        text = claim.text.strip()
        if not text or not ids or any(source_id not in by_id for source_id in ids):
            continue
        cited_numbers = set().union(*(numbers_in(by_id[i].text) for i in ids))
        if not numbers_in(text) <= cited_numbers:
            continue
        kept.append(replace(claim, text=text, source_ids=ids))
    return kept
