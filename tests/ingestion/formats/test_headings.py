"""The heading stack every format with headings shares."""

from __future__ import annotations

from ingestion.formats.headings import HeadingStack


def test_a_deeper_heading_opens_under_the_current_one() -> None:
    headings = HeadingStack()
    assert headings.path == ()
    assert headings.push(1, "Leave") == ("Leave",)
    assert headings.push(2, "Carry-over") == ("Leave", "Carry-over")
    assert headings.path == ("Leave", "Carry-over")


def test_a_heading_closes_those_of_its_level_and_deeper() -> None:
    headings = HeadingStack()
    for level, title in [
        (0, "Handbook"),
        (1, "Leave"),
        (2, "Carry-over"),
        (3, "Notes"),
    ]:
        headings.push(level, title)
    assert headings.push(2, "Sick days") == ("Handbook", "Leave", "Sick days")
    assert headings.push(1, "Expenses") == ("Handbook", "Expenses")


def test_a_heading_skipping_levels_keeps_the_ones_above_it() -> None:
    headings = HeadingStack()
    headings.push(1, "Top")
    headings.push(4, "Deep")
    assert headings.push(3, "Middle") == ("Top", "Middle")
    assert headings.push(1, "Next") == ("Next",)
