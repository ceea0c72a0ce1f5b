"""Line joining: a one-line paragraph's shortcut gives what the loop gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ingestion.formats.textutil import join_lines

LINE = st.text(alphabet=st.sampled_from("ab- \t\u00ad\u3000中文\n\x0b"), max_size=12)


@given(LINE, st.booleans())
def test_a_single_line_joins_as_the_loop_joins_it(line: str, dehyphenate: bool) -> None:
    # A generator takes the loop; a one-item list the shortcut.
    assert join_lines([line], dehyphenate=dehyphenate) == join_lines(
        iter([line]), dehyphenate=dehyphenate
    )


def test_a_single_line_collapses_whitespace_and_drops_soft_hyphens() -> None:
    assert join_lines(["  Annual\u00ad leave \t days  "]) == "Annual leave days"
    assert join_lines([" \t "]) == ""
