"""PDF: paragraphs with their 1-based page numbers.

pdfminer.six reads the file's structure (its pages, their sharing, passwords,
damage), for a file of up to `pdf_reader.FEW_PAGES` pages that pdfium opens only
if a page needs pdfminer; each page's text is read by pdfium, or by pdfminer where
pdfium reads it badly (`pdf_reader.py`).
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice

from pdfminer.pdfdocument import (
    PDFDocument,
    PDFEncryptionError,
    PDFNoValidXRef,
    PDFPasswordIncorrect,
)
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from ..blocks import Block, ParseError, PasswordProtected, TooManyPages
from .base import ParseRequest
from .pdf_reader import PageReader
from .pdf_shared import SharedPages
from .pdf_tables import page_blocks
from .scans import ScannedPages
from .textutil import join_lines, remove_control_chars

_PDF_CHAR_FIXES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
        # Some CJK fonts map ideographs to Kangxi radicals that look the same but
        # would never match a query typed by a person.
        **{
            chr(cp): unicodedata.normalize("NFKC", chr(cp))
            for cp in range(0x2F00, 0x2FD6)
        },
    }
)


def _pdf_text(lines: list[str]) -> str:
    if not lines:
        return ""  # an empty table cell: a third of the calls
    text = join_lines(
        [line if line.isascii() else line.translate(_PDF_CHAR_FIXES) for line in lines],
        dehyphenate=True,
    )
    return remove_control_chars(text)


@contextmanager
def _pdf_errors() -> Iterator[None]:
    try:
        yield
    except ParseError:
        raise
    except PDFPasswordIncorrect:
        # The empty user password was tried: an owner password alone opens.
        raise PasswordProtected("password-protected PDF") from None
    except PDFEncryptionError as exc:
        # A certificate or an unknown handler: only an unprotected copy will do.
        raise PasswordProtected(
            "password-protected PDF: its encryption cannot be opened"
        ) from exc
    except MemoryError:
        raise
    except Exception as exc:
        raise ParseError(f"damaged PDF: {type(exc).__name__}") from exc


class _ScannedXrefDocument(PDFDocument):
    """Ignores the file's cross-reference table and rebuilds it by scanning objects."""

    def find_xref(self, parser: PDFParser) -> int:
        raise PDFNoValidXRef("rebuilding the cross-reference table")


def _check_header(data: bytes) -> None:
    # Acrobat accepts the header anywhere in the first KiB; so does pdfminer.
    if b"%PDF-" not in data[:1024]:
        raise ParseError("not a PDF file")


def _pdf_pages(data: bytes, stop_after: int | None = None) -> list[PDFPage]:
    _check_header(data)
    document = PDFDocument(PDFParser(io.BytesIO(data)))
    pages = list(islice(PDFPage.create_pages(document), stop_after))
    if not pages:
        # A wrong xref table (offsets shifted by one object, say) hides every page;
        # viewers then rebuild the table by scanning the file, and so do we.
        document = _ScannedXrefDocument(PDFParser(io.BytesIO(data)))
        pages = list(islice(PDFPage.create_pages(document), stop_after))
    if not pages:
        raise ParseError("damaged PDF: no pages")
    return pages


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """Paragraphs with 1-based page numbers; a PDF without a text layer gives [].

    With `shard` = (index, count), only every count-th page from `index` on. Beyond
    the limit's `max_pdf_pages`, `TooManyPages` before any page is read; pages
    that share their content are read once (`pdf_shared.py`).
    """
    max_pages = request.limits.max_pdf_pages
    stop_after = None if max_pages is None else max_pages + 1
    with _pdf_errors():
        _check_header(data)
        reader = PageReader(data, lambda: _pdf_pages(data, stop_after))
        try:
            if max_pages is not None and reader.count > max_pages:
                raise TooManyPages(
                    f"the PDF has more than {max_pages} pages, the limit"
                )
            return _read_pages(data, reader, request)
        finally:
            reader.close()


def _read_pages(data: bytes, reader: PageReader, request: ParseRequest) -> list[Block]:
    index, count = request.shard

    def text_layer(number: int) -> list[Block]:
        glyphs, rulings = reader.read(number)
        return page_blocks(glyphs, rulings, page=number, clean=_pdf_text)

    pages = reader.pages
    shared = SharedPages.unshared(reader.count) if pages is None else SharedPages(pages)
    shared.check_cost(text_layer, request.limits)
    mine = [n for n in range(1, reader.count + 1) if (n - 1) % count == index]
    request.progress(0, len(mine))
    scans = ScannedPages(data, request, reader.pdfium)
    blocks: list[Block] = []
    try:
        for done, number in enumerate(mine, start=1):
            page = shared.copy(number)
            if page is None:
                found = shared.text_layer(number)
                if found is None:
                    found = text_layer(number)
                text = "".join(block.text for block in found)
                page = scans.blocks(number, text) or found
                shared.remember(number, page)
            blocks.extend(page)
            request.progress(done, len(mine))
    finally:
        scans.close()
    scans.check_nothing_lost(blocks)
    return blocks


def pdf_page_count(data: bytes, *, stop_after: int | None = None) -> int:
    """Pages of the PDF, counting no further than `stop_after`."""
    with _pdf_errors():
        return len(_pdf_pages(data, stop_after))
