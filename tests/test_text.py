"""`core/text.py`: one definition of CJK text and of a number, composed from
named Unicode blocks."""

from __future__ import annotations

import re

import pytest

from core.text import CJK_LETTERS, COMMON_TEXT, HAN, NUMBER, RADICALS, UNSPACED


def _holds(character_class: str, character: str) -> bool:
    return re.fullmatch(f"[{character_class}]", character) is not None


@pytest.mark.parametrize(
    ("character", "han", "letters", "unspaced", "common"),
    [
        ("中", True, True, True, True),
        ("㐀", True, True, True, False),  # extension A: rare in everyday text
        ("𠀀", True, True, True, False),  # extension B, outside the basic plane
        ("\uf900", True, True, True, False),  # a compatibility ideograph
        ("か", False, True, True, True),
        ("한", False, True, False, True),  # Korean spaces its words
        ("，", False, False, True, True),  # fullwidth punctuation
        ("。", False, False, True, True),
        ("a", False, False, False, True),
        ("é", False, False, False, True),
        ("\u4dc0", False, False, False, False),  # a Yijing hexagram: a symbol
    ],
)
def test_each_class_holds_the_scripts_it_names(
    character, han, letters, unspaced, common
):
    assert _holds(HAN, character) is han
    assert _holds(CJK_LETTERS, character) is letters
    assert _holds(UNSPACED, character) is unspaced
    assert _holds(COMMON_TEXT, character) is common


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("revenue of 1,250.5 in 2019", ["1,250.5", "2019"]),
        ("1250.5 and 12", ["1250.5", "12"]),
        ("12,34", ["12", "34"]),  # not a thousands group
        ("第3季度增长12.5%", ["3", "12.5"]),
    ],
)
def test_a_number_is_read_whole_with_its_thousands_and_decimals(text, numbers):
    assert re.findall(NUMBER, text) == numbers


def test_nothing_unspaced_sorts_before_the_radicals():
    """Line joining tests `char >= RADICALS[0]` before the class."""
    unspaced = re.compile(f"[{UNSPACED}]")
    assert unspaced.match(RADICALS[0])
    assert not any(unspaced.match(chr(code)) for code in range(ord(RADICALS[0])))
