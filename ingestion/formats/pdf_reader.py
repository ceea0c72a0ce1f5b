"""Which library reads each PDF page: pdfium, or pdfminer.six where pdfium reads
that page badly.

pdfium reads a page in C++ (`pdf_pdfium.py`); pdfminer.six interprets it in
Python, ten times slower, but reads a few things pdfium does not: a font whose
codes map to Unicode only through a non-Unicode CMap pdfminer knows, or text
that pdfium's text page leaves out. So pdfium reads every page first, and the
page goes to pdfminer when what pdfium read says so:

- no text while the page has text objects (pdfium skipped them), or
- more than `MAX_UNREADABLE_SHARE` of its characters in fonts pdfium could not
  map to Unicode (it writes their codes instead: `HasUnicodeMapError`, sampled
  at 64 characters a page), or
- more than `MAX_UNREADABLE_SHARE` of them replacement, private-use or control
  characters, or
- more than `MAX_LOST_SHARE` of its text objects drawn with an extent but not
  read into its text page at all (`pdf_pdfium.lost_text_objects`).

Both give the same glyphs and rulings (`pdf_layout.Glyph`, `pdf_tables.Box`),
so the layout, column and table code does not know who read the page. When
pdfium cannot open a file pdfminer opened, or counts other pages, pdfminer
reads all of them. The threshold and what it catches: docs/benchmarks.md,
"PDF parsing".

pdfminer's pass over the file's structure (its pages, which `pdf_shared.py`
compares to find pages that share their content) is made at once only for a
file of more than `FEW_PAGES` pages or one pdfium cannot open. A shorter file
can repeat a page at most that many times, so its pages are read one by one,
and pdfminer's structure is read only if a page needs pdfminer; if pdfminer
then counts other pages than pdfium, pdfium's reading of that page stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager

from .pdf_native import NativePages
from .pdf_pdfium import (
    PageDrawing,
    PageWords,
    address,
    open_document,
    page_drawing,
    page_words,
)
from .pdf_tables import Box, TableCollector

if TYPE_CHECKING:
    import pypdfium2
    from pdfminer.pdfpage import PDFPage

    from .pdf_layout import Glyph

# Shares of a page's characters beyond which pdfminer reads it instead (how the
# corpus pages fall on either side: docs/benchmarks.md, "PDF parsing").
MAX_UNREADABLE_SHARE = 0.1
# Text objects per character pdfium read beyond which it lost the page's text
# (every text object draws a glyph or more; kampo.pdf's vertical glyphs: 19
# characters for 2,624 objects; two other corpus pages pass 1, none 2).
MAX_OBJECTS_PER_CHAR = 2
# Text objects drawn but lost from pdfium's text page, as a share of the page's
# text objects: up to 1.0 % on the corpus pages pdfium reads whole (a stray mark in
# a form or a report), 6.3 % to 74 % where it lost words (issue-1008's inline
# images page, vertical writing in fonts it lacks: jo, simple3, issue-449).
MAX_LOST_SHARE = 0.02
# Pages up to which a file pdfium opens is read without pdfminer's pass over its
# structure: the shared-pages check guards against one page repeated thousands
# of times in a small file; sixteen reads of a page are the cost of any sixteen
# pages. Most documents are this short (17 of the corpus's 20 multi-page PDFs).
FEW_PAGES = 16


def pdfminer_reads(words: PageWords, drawing: PageDrawing) -> bool:
    """Whether pdfium read the page badly enough for pdfminer to read it."""
    if words.chars == 0:
        return bool(drawing.text_objects)
    return (
        words.unmapped_share > MAX_UNREADABLE_SHARE
        or words.odd > MAX_UNREADABLE_SHARE * words.chars
        or len(drawing.text_objects) > MAX_OBJECTS_PER_CHAR * words.chars
        or words.lost_objects > MAX_LOST_SHARE * len(drawing.text_objects)
    )


class PageReader:
    """The glyphs and rulings of each page of one PDF, by pdfium or pdfminer.

    `load_pages` gives pdfminer's pages (its pass over the file's structure). It
    is called at once, unless pdfium opens the file and finds at most
    `FEW_PAGES` pages: then only when a page needs pdfminer, and pdfium's count
    stands.
    """

    def __init__(self, data: bytes, load_pages: Callable[[], list[PDFPage]]) -> None:
        self.pdfium = open_document(data)
        self._load_pages = load_pages
        self._pages: list[PDFPage] | None = None
        if self.pdfium is None or len(self.pdfium) > FEW_PAGES:
            try:
                self._pages = load_pages()
            except BaseException:
                self.close_pdfium()
                raise
            if self.pdfium is not None and len(self.pdfium) != len(self._pages):
                self.close_pdfium()
        self.count = len(self.pdfium) if self._pages is None else len(self._pages)
        self.pages = self._pages  # None: each page is read as if alone
        self._native = NativePages.open() if self.pdfium is not None else None
        self._interpreter: PDFPageInterpreter | None = None
        self._collector: TableCollector | None = None
        self.by_pdfminer: list[int] = []  # pages pdfminer read, for the record

    def read(self, number: int) -> tuple[Sequence[Glyph], list[Box]]:
        """Page `number`'s (1-based) glyphs and rulings."""
        if self.pdfium is not None:
            found, misread = self._by_pdfium(self.pdfium, number)
            if not misread or not self._pdfminer_lines_up():
                return found
        self.by_pdfminer.append(number)
        return self._by_pdfminer(number)

    def _pdfminer_lines_up(self) -> bool:
        """Whether pdfminer's pages, read now if they were not, are pdfium's
        (a lone page stays the first of pdfminer's, as it always was)."""
        if self._pages is None:
            self._pages = self._load_pages()
        return len(self._pages) == self.count or (self.count == 1 and bool(self._pages))

    def close(self) -> None:
        if self._native is not None:
            self._native.close()
        self.close_pdfium()

    def close_pdfium(self) -> None:
        if self.pdfium is not None:
            self.pdfium.close()
            self.pdfium = None

    def _by_pdfium(
        self, document: pypdfium2.PdfDocument, number: int
    ) -> tuple[tuple[Sequence[Glyph], list[Box]], bool]:
        """What pdfium read of the page, and whether it misread it."""
        page = document[number - 1]
        try:
            drawing = page_drawing(address(page.raw), self._native)
            textpage = page.get_textpage()
            try:
                words = page_words(
                    address(textpage.raw), drawing.text_objects, self._native
                )
            finally:
                textpage.close()
        finally:
            page.close()
        return (words.glyphs, drawing.rulings), pdfminer_reads(words, drawing)

    def _by_pdfminer(self, number: int) -> tuple[Sequence[Glyph], list[Box]]:
        if self._interpreter is None or self._collector is None:
            resources = PDFResourceManager(caching=True)
            self._collector = TableCollector(resources)
            self._interpreter = PDFPageInterpreter(resources, self._collector)
        self._interpreter.process_page(self._pages[number - 1])
        glyphs = self._collector.glyphs
        if self._native is not None:  # placed into lines by the compiled reader
            return self._native.glyphs_from(glyphs), self._collector.rulings
        return glyphs, self._collector.rulings
