"""Terms a question puts in quotes ("How was 'incidence rate' defined?"): the
asker names them exactly, so a unit that does not hold one answers about
something else, however close its meaning."""

from __future__ import annotations

import re
import unicodedata

# An opening quote not inside a word (so "What's" and "Don't" open nothing), and
# its closing mark not followed by a letter ("it's"). Book-title marks 《》 are the
# question analysis' own (question.py): a title may be cited by another name.
_QUOTED = re.compile(
    r"(?<!\w)'([^'\n]{2,60})'(?!\w)"
    r'|(?<!\w)"([^"\n]{2,60})"(?!\w)'
    r"|‘([^’\n]{2,60})’|“([^”\n]{2,60})”|「([^」\n]{2,60})」|『([^』\n]{2,60})』"
)


def _folded(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).casefold()


def quoted_terms(question: str) -> tuple[str, ...]:
    """The quoted terms of `question`, folded (NFKC, case, spaces)."""
    return tuple(
        _folded(next(group for group in match.groups() if group)).strip()
        for match in _QUOTED.finditer(question)
    )


def holds_quoted(text: str, terms: tuple[str, ...]) -> bool:
    """Whether `text` holds every quoted term (true when there are none)."""
    folded = _folded(text)
    return all(term in folded for term in terms)
