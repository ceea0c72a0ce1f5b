"""The heading path above each block, shared by every format with headings."""

from __future__ import annotations


class HeadingStack:
    """The open headings, outermost first.

    A heading closes every open heading of the same or a deeper level (a higher
    number) and opens itself; `path` is the titles of the open headings.
    """

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []
        self.path: tuple[str, ...] = ()

    def push(self, level: int, text: str) -> tuple[str, ...]:
        """Open the heading; return the new path."""
        self._open = [(lvl, title) for lvl, title in self._open if lvl < level]
        self._open.append((level, text))
        self.path = tuple(title for _, title in self._open)
        return self.path
