"""Document parsers: bytes in, a flat list of text blocks out.

Every parser returns blocks in reading order. A heading is emitted as a `heading` block
and also becomes part of the `heading_path` of every block below it, until a heading of
the same or a higher level replaces it. PDF blocks carry their 1-based page number.

Whatever is wrong with the input surfaces as `ParseError`, whose `reason` is short and
safe to show to users or store on a task row: no paths, no tracebacks. Inputs beyond
`ParseLimits` raise its subclasses `FileTooLarge` and `TooManyPages`, checked before
the expensive work starts (a DOCX is measured from its zip directory, never inflated).
"""

from __future__ import annotations

import codecs
import io
import math
import re
import textwrap
import unicodedata
import zipfile
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from html import unescape
from html.parser import HTMLParser
from itertools import accumulate, islice
from typing import TYPE_CHECKING

from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PACKAGE_URI, PackURI
from docx.oxml.ns import qn
from lxml import etree
from pdfminer.pdfdevice import PDFTextDevice
from pdfminer.pdfdocument import (
    PDFDocument,
    PDFEncryptionError,
    PDFNoValidXRef,
    PDFPasswordIncorrect,
)
from pdfminer.pdffont import PDFUnicodeNotDefined
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from .blocks import (
    CJK_CLASS,
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    Block,
    FileTooLarge,
    ParseError,
    ParseLimits,
    TooManyPages,
    table_row_text,
)

if TYPE_CHECKING:
    from lxml.etree import _Element
    from pdfminer.pdfcolor import PDFColorSpace
    from pdfminer.pdfdevice import PDFTextSeq
    from pdfminer.pdffont import PDFFont
    from pdfminer.pdfinterp import PDFGraphicState
    from pdfminer.utils import Matrix, Point

_CJK_RE = re.compile(f"[{CJK_CLASS}]")


def parse_document(
    kind: str,
    data: bytes,
    limits: ParseLimits | None = None,
    *,
    shard: tuple[int, int] = (0, 1),
    retain: list | None = None,
) -> list[Block]:
    """Parse `data` as `kind` (one of DOCUMENT_KINDS); only ParseError escapes.

    `shard` = (index, count) lets `count` processes share one file: the PDF pages
    whose 0-based number is `index` modulo `count`, or the index-th run of a DOCX
    body, cut at headings. Other kinds are read whole. A DOCX's XML tree is
    appended to `retain`, if given, for the caller to free when it suits it.
    """
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ParseError(f"unsupported document kind: {kind[:40]}")
    limits = limits or ParseLimits()
    if kind == "docx":
        check_docx_archive(data, limits)
    try:
        if kind == "pdf":
            blocks = parse_pdf(data, shard=shard, max_pages=limits.max_pdf_pages)
        elif kind == "docx":
            blocks = parse_docx(data, shard=shard, retain=retain)
        else:
            blocks = parser(data)
    except (ParseError, MemoryError):
        raise
    except Exception as exc:
        raise ParseError(f"unreadable {kind} document: {type(exc).__name__}") from exc
    return [block for block in blocks if block.text.strip()]


_CJK_FIRST = "\u2e80"  # no CJK character sorts before it


def is_cjk(char: str) -> bool:
    return char >= _CJK_FIRST and _CJK_RE.match(char) is not None


# --- text helpers -----------------------------------------------------------------

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
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_HYPHENATED_END = re.compile(r"[^\W\d_][-\u2010]$")
_SOFT_HYPHEN = "\u00ad"


def _join_lines(lines: Iterable[str], *, dehyphenate: bool = False) -> str:
    """Join wrapped lines into one paragraph, collapsing whitespace.

    No space is inserted where either side is CJK or after a soft hyphen; with
    `dehyphenate`, a word broken by a hyphen at the line end is glued back when the
    next line starts in lowercase. Soft hyphens are dropped.
    """
    parts: list[str] = []
    previous = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        if previous and previous[-1] != _SOFT_HYPHEN:
            if dehyphenate and line[0].islower() and _HYPHENATED_END.search(previous):
                parts[-1] = parts[-1][:-1]
            elif not (is_cjk(previous[-1]) or is_cjk(line[0])):
                parts.append(" ")
        parts.append(line)
        previous = line
    return "".join(parts).replace(_SOFT_HYPHEN, "")


def _clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    return _CONTROL_RE.sub("", text)


def _paragraphs(text: str) -> list[str]:
    """Split on blank lines; join the lines of each paragraph."""
    chunks = re.split(r"\n[ \t\v\u3000]*\n", text)
    return [p for p in (_join_lines(c.split("\n")) for c in chunks) if p]


# --- decoding ---------------------------------------------------------------------

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG label mapping: browsers read these labels as the wider encoding.
_CHARSET_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "csgb2312": "gb18030",
    "chinese": "gb18030",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "windows-1252": "cp1252",
}
# Bytes 0x80-0x9F read as Latin-1 give C1 controls; cp1252 has letters for most.
_C1_TO_CP1252 = {
    0x80 + i: char
    for i, char in enumerate(bytes(range(0x80, 0xA0)).decode("cp1252", "replace"))
    if char != "\ufffd"
}
# Codecs Python accepts by name that no web page means as its charset.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined"}
)
_CJK_SAMPLE = 20_000


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode bytes of unknown encoding, deterministically.

    Order: byte-order mark, strict UTF-8, the declared charset (used only if it decodes
    with almost no replacement characters), GB18030 if the result reads as Chinese,
    else cp1252 with Latin-1 for the bytes cp1252 leaves undefined.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        text = _decode_declared(data, declared)
        if text is not None:
            return text
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        pass
    else:
        if _looks_chinese(text):
            return text
    return data.decode("latin-1").translate(_C1_TO_CP1252)


def _decode_declared(data: bytes, declared: str) -> str | None:
    label = declared.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        encoding = codecs.lookup(label).name
    except LookupError:
        return None
    if encoding in _NOT_CHARSETS:
        return None
    if encoding == "cp1252":
        return data.decode("latin-1").translate(_C1_TO_CP1252)
    try:
        text = data.decode(encoding, errors="replace")
    except (LookupError, UnicodeError, ValueError):
        return None  # a codec Python knows but that is not a text charset
    if text.count("\ufffd") > len(text) // 1000:
        return None
    return text


@cache
def _in_gb2312(char: str) -> bool:
    try:
        char.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _looks_chinese(text: str) -> bool:
    """Most non-ASCII characters are common Chinese ones (GB2312 covers them).

    Latin-1 text often decodes as GB18030 too, but its accented letters pair with
    ASCII bytes into rare ideographs outside GB2312.
    """
    sample = [char for char in text[:_CJK_SAMPLE] if ord(char) > 0x7F]
    if not sample:
        return False
    common = sum(1 for char in sample if _in_gb2312(char))
    return common >= 0.8 * len(sample)


# --- PDF --------------------------------------------------------------------------

# A glyph as (text, direction, along_start, along_end, across, size): coordinates are
# rotated so that text runs towards +along and the next line sits at a lower `across`.
_Glyph = tuple[str, int, float, float, float, float]

_LINE_TOLERANCE = 0.5  # baseline shift, in font sizes, still on the same line
_WORD_GAP = 0.1  # gap, in font sizes, read as a space (pdfminer's word_margin)
_CJK_WORD_GAP = 1.0  # CJK text is often letter-spaced; only a wide gap is a space
_MAX_LINE_STEP = 1.6  # baseline step, in font sizes, that still continues a paragraph
_MAX_SIZE_RATIO = 1.25  # a bigger change of font size starts a new paragraph
_MAX_WORD_GAP = 1.0  # a wider gap on one baseline separates columns or cells
_OPEN_PARAGRAPHS = 16  # paragraphs a new line may still join


class _GlyphCollector(PDFTextDevice):
    """Records each glyph's text and position in content-stream order.

    pdfminer's layout analysis builds an object per character and groups them all
    geometrically. For plain text in reading order, content-stream order plus the few
    geometric checks of `_glyph_paragraphs` is enough, and about twice as fast.
    """

    def __init__(self, rsrcmgr: PDFResourceManager) -> None:
        super().__init__(rsrcmgr)
        self.glyphs: list[_Glyph] = []

    def begin_page(self, page: PDFPage, ctm: Matrix) -> None:
        self.glyphs = []

    def render_string_horizontal(
        self,
        seq: PDFTextSeq,
        matrix: Matrix,
        pos: Point,
        font: PDFFont,
        fontsize: float,
        scaling: float,
        charspace: float,
        wordspace: float,
        rise: float,
        dxscale: float,
        ncs: PDFColorSpace,
        graphicstate: PDFGraphicState,
    ) -> Point:
        """pdfminer's loop with `render_char` inlined: most text is horizontal, and
        a call, a matrix and a font-size computation per glyph added up to a fifth
        of the parse. Positions and advances are computed exactly as there."""
        x, y = pos
        a, b, c, d, e, f = matrix
        size = fontsize * math.hypot(c, d) or 1.0
        to_unichr, char_width, glyphs = font.to_unichr, font.char_width, self.glyphs
        needcharspace = False
        for obj in seq:
            if isinstance(obj, (int, float)):
                x -= obj * dxscale
                needcharspace = True
                continue
            if not isinstance(obj, bytes):
                continue  # pdfminer logs and skips it too
            for cid in font.decode(obj):
                if needcharspace:
                    x += charspace
                try:
                    text = to_unichr(cid)
                except PDFUnicodeNotDefined:
                    text = ""
                advance = char_width(cid) * fontsize * scaling
                if text:
                    glyphs.append(
                        _horizontal_glyph(
                            text,
                            x * a + y * c + e,
                            x * b + y * d + f,
                            (a * advance, b * advance) if advance else (a, b),
                            size,
                        )
                    )
                x += advance
                if cid == 32 and wordspace:
                    x += wordspace
                needcharspace = True
        return (x, y)

    def render_char(
        self,
        matrix: Matrix,
        font: PDFFont,
        fontsize: float,
        scaling: float,
        rise: float,
        cid: int,
        ncs: PDFColorSpace,
        graphicstate: PDFGraphicState,
    ) -> float:
        # Vertical fonts only (horizontal text goes through the loop above).
        try:
            text = font.to_unichr(cid)
        except PDFUnicodeNotDefined:
            text = ""  # pdfminer would print "(cid:N)": noise for search
        advance = font.char_width(cid) * fontsize * scaling
        if text:
            a, b, c, d, e, f = matrix
            if font.is_vertical():
                delta = (c * advance, d * advance) if advance else (-c, -d)
                size = fontsize * math.hypot(a, b)
            else:
                delta = (a * advance, b * advance) if advance else (a, b)
                size = fontsize * math.hypot(c, d)
            self.glyphs.append(_horizontal_glyph(text, e, f, delta, size or 1.0))
        return advance


def _horizontal_glyph(
    text: str, e: float, f: float, delta: tuple[float, float], size: float
) -> _Glyph:
    """The glyph at (e, f) advancing by `delta`, rotated to run towards +along."""
    dx, dy = delta
    if abs(dx) >= abs(dy):
        if dx >= 0:
            return (text, 0, e, e + dx, f, size)
        return (text, 2, -e, -e - dx, -f, size)
    if dy >= 0:
        return (text, 1, f, f + dy, -e, size)
    return (text, 3, -f, -f - dy, e, size)


def _to_page(direction: int, along: float, across: float) -> tuple[float, float]:
    """Undo the rotation applied by `_GlyphCollector.render_char`."""
    if direction == 0:
        return along, across
    if direction == 1:
        return -across, along
    if direction == 2:
        return -along, -across
    return across, -along


@dataclass(slots=True)
class _Line:
    """A run of glyphs on one baseline, in the rotated frame of `_Glyph`."""

    direction: int
    start: float
    end: float
    across: float
    size: float
    parts: list[str]

    def continued_by(self, line: _Line) -> bool:
        """Whether `line` is the next line of the same paragraph, just below."""
        scale = max(line.size, self.size)
        step = self.across - line.across
        return (
            line.direction == self.direction
            and _LINE_TOLERANCE * scale < step <= _MAX_LINE_STEP * scale
            and self.start - 0.5 * (self.end - self.start) <= line.start <= self.end
            and scale <= _MAX_SIZE_RATIO * min(line.size, self.size)
        )


def _glyph_paragraphs(glyphs: list[_Glyph]) -> list[list[str]]:
    """Group glyphs into lines, and lines into paragraphs.

    Lines are built in content-stream order. A new line joins the most recently
    extended paragraph whose last line sits just above it, so columns drawn row by
    row (forms, newsletters) still come out one paragraph at a time.
    """
    paragraphs: list[list[_Line]] = []
    recent: list[int] = []  # paragraph indexes, most recently extended last
    line: _Line | None = None
    home = -1
    pending_space = False
    for text, direction, start, end, across, size in glyphs:
        if text.isspace():
            pending_space = True
            continue
        # Same baseline and no column gap: the glyph continues the line (inlined,
        # this loop runs once per glyph).
        if line is not None and direction == line.direction:
            scale = max(size, line.size)
            line_end = line.end
            if (
                abs(across - line.across) <= _LINE_TOLERANCE * scale
                and line_end - scale <= start <= line_end + _MAX_WORD_GAP * scale
            ):
                gap = start - line_end
                last, first = line.parts[-1][-1], text[0]
                if (
                    last >= _CJK_FIRST
                    and first >= _CJK_FIRST
                    and is_cjk(last)
                    and is_cjk(first)
                ):
                    if gap > _CJK_WORD_GAP * scale:
                        line.parts.append(" ")
                elif pending_space or gap > _WORD_GAP * scale:
                    line.parts.append(" ")
                line.parts.append(text)
                line.end = max(line_end, end)
                line.across = across
                line.size = max(line.size, size)
                pending_space = False
                continue
        new = _Line(direction, start, end, across, size, [text])
        home = _place_line(new, line, home, paragraphs, recent)
        line = new
        pending_space = False
    return [["".join(each.parts) for each in lines] for lines in paragraphs]


def _place_line(
    line: _Line,
    previous: _Line | None,
    previous_home: int,
    paragraphs: list[list[_Line]],
    recent: list[int],
) -> int:
    """Add `line` to the paragraph it continues, or to a new one; return its index."""
    home = -1
    if previous is not None and previous.direction != line.direction:
        # Vertical CJK set with a horizontal font draws punctuation rotated: a glyph
        # right next to the previous one continues its paragraph.
        x0, y0 = _to_page(previous.direction, previous.end, previous.across)
        x1, y1 = _to_page(line.direction, line.start, line.across)
        scale = max(line.size, previous.size)
        if math.hypot(x1 - x0, y1 - y0) <= _MAX_LINE_STEP * scale:
            home = previous_home
    if home < 0:
        for index in reversed(recent[-_OPEN_PARAGRAPHS:]):
            if paragraphs[index][-1].continued_by(line):
                home = index
                break
    if home < 0:
        home = len(paragraphs)
        paragraphs.append([line])
    else:
        paragraphs[home].append(line)
        recent.remove(home)
    recent.append(home)
    return home


def _pdf_text(lines: list[str]) -> str:
    text = _join_lines(
        (line.translate(_PDF_CHAR_FIXES) for line in lines), dehyphenate=True
    )
    return _CONTROL_RE.sub("", text)


@contextmanager
def _pdf_errors() -> Iterator[None]:
    try:
        yield
    except ParseError:
        raise
    except PDFPasswordIncorrect:
        raise ParseError("password-protected PDF") from None
    except PDFEncryptionError as exc:
        raise ParseError("unsupported or damaged PDF encryption") from exc
    except MemoryError:
        raise
    except Exception as exc:
        raise ParseError(f"damaged PDF: {type(exc).__name__}") from exc


class _ScannedXrefDocument(PDFDocument):
    """Ignores the file's cross-reference table and rebuilds it by scanning objects."""

    def find_xref(self, parser: PDFParser) -> int:
        raise PDFNoValidXRef("rebuilding the cross-reference table")


def _pdf_pages(data: bytes, stop_after: int | None = None) -> list[PDFPage]:
    # Acrobat accepts the header anywhere in the first KiB; so does pdfminer.
    if b"%PDF-" not in data[:1024]:
        raise ParseError("not a PDF file")
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


def parse_pdf(
    data: bytes, *, shard: tuple[int, int] = (0, 1), max_pages: int | None = None
) -> list[Block]:
    """Paragraphs with 1-based page numbers; a PDF without a text layer gives [].

    With `shard` = (index, count), only every count-th page from `index` on. Beyond
    `max_pages` pages, `TooManyPages` before any page is read.
    """
    index, count = shard
    blocks: list[Block] = []
    with _pdf_errors():
        pages = _pdf_pages(data, None if max_pages is None else max_pages + 1)
        if max_pages is not None and len(pages) > max_pages:
            raise TooManyPages(f"the PDF has more than {max_pages} pages, the limit")
        resources = PDFResourceManager(caching=True)
        device = _GlyphCollector(resources)
        interpreter = PDFPageInterpreter(resources, device)
        for number, page in enumerate(pages, start=1):
            if (number - 1) % count != index:
                continue
            interpreter.process_page(page)
            for lines in _glyph_paragraphs(device.glyphs):
                text = _pdf_text(lines)
                if text:
                    blocks.append(Block(text=text, page=number))
    return blocks


def pdf_page_count(data: bytes, *, stop_after: int | None = None) -> int:
    """Pages of the PDF, counting no further than `stop_after`."""
    with _pdf_errors():
        return len(_pdf_pages(data, stop_after))


# --- DOCX -------------------------------------------------------------------------

_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_W_P, _W_TBL, _W_TR, _W_TC = qn("w:p"), qn("w:tbl"), qn("w:tr"), qn("w:tc")
_W_R, _W_T, _W_TAB, _W_BR, _W_CR = (
    qn("w:r"),
    qn("w:t"),
    qn("w:tab"),
    qn("w:br"),
    qn("w:cr"),
)
_W_NO_BREAK_HYPHEN = qn("w:noBreakHyphen")
_W_SDT, _W_SDT_CONTENT, _W_CUSTOM_XML = (
    qn("w:sdt"),
    qn("w:sdtContent"),
    qn("w:customXml"),
)
_W_PPR, _W_RPR, _W_VANISH = qn("w:pPr"), qn("w:rPr"), qn("w:vanish")
_W_TCPR, _W_GRID_SPAN = qn("w:tcPr"), qn("w:gridSpan")
_W_PSTYLE, _W_OUTLINE, _W_NUMPR = qn("w:pStyle"), qn("w:outlineLvl"), qn("w:numPr")
_W_VAL = qn("w:val")
_W_DOCUMENT, _W_BODY = qn("w:document"), qn("w:body")
_DOCX_MAIN_TYPES = frozenset(
    {
        CT.WML_DOCUMENT_MAIN,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
        "application/vnd.ms-word.document.macroEnabled.main+xml",
        "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
    }
)
# python-docx's parser options, without its element classes; no entities, no network.
_DOCX_XML_PARSER = etree.XMLParser(
    remove_blank_text=True, resolve_entities=False, no_network=True
)
# Subtrees that never hold visible body text: properties, deletions, field codes, and
# the legacy copy of drawings (mc:Fallback repeats mc:Choice).
_DOCX_SKIP = frozenset(
    {
        _W_PPR,
        _W_RPR,
        qn("w:del"),
        qn("w:moveFrom"),
        qn("w:instrText"),
        qn("w:delText"),
        _MC_FALLBACK,
    }
)
_DOCX_FALSE = frozenset({"0", "false", "off"})
_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.IGNORECASE)
_TOC_STYLE = re.compile(r"^toc(?:\s*\d|\s+heading)$", re.IGNORECASE)
_RATIO_CHECK_BYTES = 1024 * 1024
_MAX_HEADING_CHARS = 200


@dataclass(frozen=True)
class _DocxStyle:
    name: str
    based_on: str | None
    outline: int | None
    numbered: bool


class _DocxStyles:
    """Heading level, list-ness and TOC-ness of paragraph styles (with basedOn)."""

    def __init__(self, styles_element: _Element | None) -> None:
        self._styles: dict[str, _DocxStyle] = {}
        self._facts: dict[str | None, tuple[bool, int | None, bool]] = {}
        self.default: str | None = None
        if styles_element is None:
            return
        for style in styles_element.iterchildren(qn("w:style")):
            if style.get(qn("w:type")) != "paragraph":
                continue
            style_id = style.get(qn("w:styleId")) or ""
            name = style.find(qn("w:name"))
            based_on = style.find(qn("w:basedOn"))
            ppr = style.find(_W_PPR)
            outline = ppr.find(_W_OUTLINE) if ppr is not None else None
            self._styles[style_id] = _DocxStyle(
                name=(name.get(_W_VAL) or "") if name is not None else "",
                based_on=based_on.get(_W_VAL) if based_on is not None else None,
                outline=_int_or_none(outline.get(_W_VAL))
                if outline is not None
                else None,
                numbered=ppr is not None and ppr.find(_W_NUMPR) is not None,
            )
            if style.get(qn("w:default")) in ("1", "true", "on"):
                self.default = style_id

    def _chain(self, style_id: str | None) -> Iterator[_DocxStyle]:
        seen: set[str] = set()
        while style_id is not None and style_id not in seen:
            seen.add(style_id)
            style = self._styles.get(style_id)
            if style is None:
                return
            yield style
            style_id = style.based_on

    def name(self, style_id: str | None) -> str:
        style = self._styles.get(style_id or "")
        return style.name if style is not None else ""

    def heading_level(self, style_id: str | None) -> int | None:
        """0 for Title, 1-9 for headings (by name, else by outline level)."""
        name = self.name(style_id).strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_STYLE.match(name)
        if match:
            return int(match.group(1))
        for style in self._chain(style_id):
            if style.outline is not None:
                return style.outline + 1 if 0 <= style.outline <= 8 else None
        return None

    def numbered(self, style_id: str | None) -> bool:
        return any(style.numbered for style in self._chain(style_id))

    def facts(self, style_id: str | None) -> tuple[bool, int | None, bool]:
        """(table-of-contents entry, heading level, numbered), once per style."""
        facts = self._facts.get(style_id)
        if facts is None:
            facts = self._facts[style_id] = (
                _TOC_STYLE.match(self.name(style_id).strip()) is not None,
                self.heading_level(style_id),
                self.numbered(style_id),
            )
        return facts


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _docx_prune(body: _Element) -> None:
    """Drop hidden runs and the subtrees that never hold visible text, in C.

    Run properties make up most of a body's elements; walking them in Python cost
    more than the rest of the parse.
    """
    for vanish in list(body.iter(_W_VANISH)):
        properties = vanish.getparent()
        run = properties.getparent()
        if (
            properties.tag == _W_RPR
            and run is not None
            and run.tag == _W_R
            and vanish.get(_W_VAL, "true").lower() not in _DOCX_FALSE
        ):
            run.getparent().remove(run)
    etree.strip_elements(body, *(_DOCX_SKIP - {_W_PPR}), with_tail=False)


def _docx_collect(element: _Element, parts: list[str]) -> None:
    for child in element.iterchildren():
        tag = child.tag
        if not isinstance(tag, str) or tag in _DOCX_SKIP:
            continue
        if tag == _W_T:
            parts.append(child.text or "")
        elif tag == _W_TAB:
            parts.append("\t")
        elif tag in (_W_BR, _W_CR):
            parts.append("\n")
        elif tag == _W_NO_BREAK_HYPHEN:
            parts.append("-")
        elif tag == _W_P:  # text boxes and nested table cells
            parts.append("\n")
            _docx_collect(child, parts)
            parts.append("\n")
        else:
            _docx_collect(child, parts)


def _docx_text(element: _Element) -> str:
    parts: list[str] = []
    _docx_collect(element, parts)
    return _join_lines("".join(parts).split("\n"))


def _docx_children(parent: _Element, wanted: frozenset[str]) -> Iterator[_Element]:
    """Children with a wanted tag, looking through content controls and custom XML."""
    for child in parent.iterchildren():
        tag = child.tag
        if tag in wanted:
            yield child
        elif tag == _W_SDT:
            content = child.find(_W_SDT_CONTENT)
            if content is not None:
                yield from _docx_children(content, wanted)
        elif tag == _W_CUSTOM_XML:
            yield from _docx_children(child, wanted)


def _docx_row_text(row: _Element) -> str:
    cells: list[str] = []
    for cell in _docx_children(row, frozenset({_W_TC})):
        cells.append(" ".join(_docx_text(cell).split()))
        # A cell merged across columns (gridSpan) keeps the columns after it, so
        # every row has its values under the same header cells.
        cells.extend([""] * (_docx_grid_span(cell) - 1))
    return table_row_text(cells)


def _docx_grid_span(cell: _Element) -> int:
    properties = cell.find(_W_TCPR)
    span = properties.find(_W_GRID_SPAN) if properties is not None else None
    value = _int_or_none(span.get(_W_VAL)) if span is not None else None
    return max(1, min(value or 1, 64))


def check_docx_archive(data: bytes, limits: ParseLimits) -> None:
    """Refuse a zip bomb from its central directory, before anything is inflated.

    The declared sizes are a hard bound: `zipfile` stops inflating a member at its
    declared size (and then fails its CRC), so a member cannot lie its way past this.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ParseError("not a valid DOCX archive") from exc
    total = sum(info.file_size for info in members)
    limit = limits.max_docx_uncompressed_bytes
    if limit is not None and total > limit:
        raise FileTooLarge(
            f"the DOCX holds {total // 2**20} MiB uncompressed, more than the "
            f"{limit // 2**20} MiB limit"
        )
    ratio = limits.max_docx_compression_ratio
    for info in members:
        if (
            ratio is not None
            and info.file_size > _RATIO_CHECK_BYTES
            and info.file_size > ratio * max(info.compress_size, 1)
        ):
            raise FileTooLarge(
                f"a part of the DOCX is compressed more than {ratio:g} to 1 "
                "(a zip bomb)"
            )


_OPC_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_OPC_RELATIONSHIP = (
    "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
)


def _docx_parts(data: bytes) -> tuple[_Element, _Element | None]:
    """The root elements of the main document part and of its styles part.

    python-docx's `Document()` parses every XML part of the package into its own
    element classes, and even its `PackageReader` inflates every part, images
    included. Only the content types, two relationship parts and these two parts
    are read here, as plain lxml; for a small file that is most of the time saved.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        content_types = _opc_xml(archive, "[Content_Types].xml")
        main_name = _opc_target(archive, PACKAGE_URI, RT.OFFICE_DOCUMENT)
    except MemoryError:
        raise
    except Exception as exc:
        raise ParseError("not a valid DOCX archive") from exc
    if (
        main_name is None
        or main_name.membername not in archive.NameToInfo
        or _opc_content_type(content_types, main_name) not in _DOCX_MAIN_TYPES
    ):
        raise ParseError("not a Word document")
    try:
        styles_name = _opc_target(archive, main_name, RT.STYLES)
        main = _opc_xml(archive, main_name.membername)
        styles = (
            _opc_xml(archive, styles_name.membername)
            if styles_name is not None and styles_name.membername in archive.NameToInfo
            else None
        )
    except etree.XMLSyntaxError as exc:
        raise ParseError("the DOCX holds malformed XML") from exc
    except MemoryError:
        raise
    except Exception as exc:  # a damaged member, a relationship without a target
        raise ParseError("not a valid DOCX archive") from exc
    if main.tag != _W_DOCUMENT:
        raise ParseError("not a Word document")
    return main, styles


def _opc_xml(archive: zipfile.ZipFile, member: str) -> _Element:
    return etree.fromstring(archive.read(member), _DOCX_XML_PARSER)


def _opc_target(
    archive: zipfile.ZipFile, source: PackURI, relationship_type: str
) -> PackURI | None:
    """The part `source`'s first internal relationship of that type points to."""
    rels = source.rels_uri.membername
    if rels not in archive.NameToInfo:
        return None
    for relationship in _opc_xml(archive, rels).iterchildren(_OPC_RELATIONSHIP):
        if (
            relationship.get("Type") == relationship_type
            and relationship.get("TargetMode") != "External"
        ):
            return PackURI.from_rel_ref(source.baseURI, relationship.get("Target"))
    return None


def _opc_content_type(content_types: _Element, part: PackURI) -> str | None:
    """By the part's override, else by its extension's default (case-blind)."""
    name, extension = part.lower(), part.ext.lower()
    for override in content_types.iterchildren(f"{_OPC_TYPES}Override"):
        if override.get("PartName", "").lower() == name:
            return override.get("ContentType")
    for default in content_types.iterchildren(f"{_OPC_TYPES}Default"):
        if default.get("Extension", "").lower() == extension:
            return default.get("ContentType")
    return None


RETAIN_MAX_DOCX_BYTES = 4 * 2**20  # zipped: about 40 MB of XML, a few 100 MB of tree

_DocxParagraph = tuple[str, int | None, str]  # (block kind, heading level, text)


class _DocxBody:
    """The body's paragraphs and tables as blocks, readable in shards.

    A shard starts at a heading that follows a content paragraph, so that chunking
    each shard alone gives the chunks of the whole (a chunk never spans a heading);
    the heading stack it starts under is rebuilt from the headings before it, which
    costs a style lookup per paragraph and the text of headings only.
    """

    def __init__(self, body: _Element, styles: _DocxStyles) -> None:
        self.elements = list(_docx_children(body, frozenset({_W_P, _W_TBL})))
        self.styles = styles
        self._read: dict[int, _DocxParagraph | None] = {}

    def _style(self, element: _Element) -> tuple[bool, int | None, bool]:
        """(table-of-contents entry, heading level, numbered) of a paragraph."""
        # One pass over the paragraph properties: lxml's find() costs microseconds.
        style_id = self.styles.default
        outline: str | None = None
        has_numbering = False
        # pPr comes first where Word writes it; others may put a comment before it.
        ppr = element[0] if len(element) and element[0].tag == _W_PPR else None
        if ppr is None:
            ppr = element.find(_W_PPR)
        if ppr is not None:
            seen_style = False
            for child in ppr:
                tag = child.tag
                if tag == _W_PSTYLE and not seen_style:
                    style_id, seen_style = child.get(_W_VAL), True
                elif tag == _W_OUTLINE and outline is None:
                    outline = child.get(_W_VAL, "")
                elif tag == _W_NUMPR:
                    has_numbering = True
        is_toc, level, numbered = self.styles.facts(style_id)
        if outline is not None:
            value = _int_or_none(outline)
            level = value + 1 if value is not None and 0 <= value <= 8 else None
        return is_toc, level, numbered or has_numbering

    def paragraph(self, index: int) -> _DocxParagraph | None:
        """The block a paragraph gives, if any."""
        if index in self._read:
            return self._read.pop(index)
        element = self.elements[index]
        is_toc, level, numbered = self._style(element)
        if is_toc:
            return None
        text = _docx_text(element)
        if not text:
            return None
        if level is not None and len(text) <= _MAX_HEADING_CHARS:
            return HEADING, level, text
        return (LIST_ITEM if numbered else PARAGRAPH), None, text

    def _heading(self, index: int) -> _DocxParagraph | None:
        """The paragraph if it is a heading; reads the text of heading styles only."""
        element = self.elements[index]
        if element.tag != _W_P:
            return None
        is_toc, level, _ = self._style(element)
        if is_toc or level is None:
            return None
        read = self._read[index] = self.paragraph(index)
        return read if read is not None and read[0] == HEADING else None

    def _may_start_shard(self, index: int) -> bool:
        if self._heading(index) is None or self.elements[index - 1].tag != _W_P:
            return False
        before = self._read[index - 1] = self.paragraph(index - 1)
        return before is not None and before[0] != HEADING

    def shard_starts(self, count: int) -> list[int]:
        """Start of each of `count` shards of about equal size, and the end.

        A shard that finds no heading to start at is empty; the one before it
        reads on to the end.
        """
        end = len(self.elements)
        if count == 1 or not end:
            return [0, *[end] * count]
        # Children (runs, table rows) stand in for the work an element costs.
        sizes = list(accumulate(len(element) + 1 for element in self.elements))
        starts = [0]
        for shard in range(1, count):
            index = max(bisect_left(sizes, sizes[-1] * shard / count), starts[-1] + 1)
            while index < end and not self._may_start_shard(index):
                index += 1
            starts.append(min(index, end))
        return [*starts, end]

    def blocks(self, start: int, end: int) -> list[Block]:
        stack: list[tuple[int, str]] = []
        for index in range(start):
            heading = self._heading(index)
            if heading is not None:
                stack = _push_heading(stack, heading[1], heading[2])
            self._read.pop(index, None)
        path = tuple(title for _, title in stack)
        blocks: list[Block] = []
        for index in range(start, end):
            element = self.elements[index]
            if element.tag == _W_TBL:
                for row in _docx_children(element, frozenset({_W_TR})):
                    text = _docx_row_text(row)
                    if text:
                        blocks.append(
                            Block(text=text, heading_path=path, kind=TABLE_ROW)
                        )
                continue
            paragraph = self.paragraph(index)
            if paragraph is None:
                continue
            kind, level, text = paragraph
            if kind == HEADING:
                stack = _push_heading(stack, level, text)
                path = tuple(title for _, title in stack)
            blocks.append(Block(text=text, heading_path=path, kind=kind))
        return blocks


def _push_heading(
    stack: list[tuple[int, str]], level: int, text: str
) -> list[tuple[int, str]]:
    return [*((lvl, title) for lvl, title in stack if lvl < level), (level, text)]


def parse_docx(
    data: bytes, *, shard: tuple[int, int] = (0, 1), retain: list | None = None
) -> list[Block]:
    """Body paragraphs, headings and table rows in document order.

    Headers, footers, footnotes, comments and table-of-contents entries are left out.
    With `shard` = (index, count), only the index-th of `count` runs of the body, cut
    at headings (see `_DocxBody`); the shards' blocks in order are the whole's.
    The XML tree goes into `retain`, if given: freeing a large one takes time
    (40 ms for the 5 MB of the handbook), which the parser processes spend after
    they have answered. Not the tree of a file of RETAIN_MAX_DOCX_BYTES or more, whose
    memory matters more while its text is chunked and embedded.
    """
    document, styles_element = _docx_parts(data)
    if retain is not None and len(data) < RETAIN_MAX_DOCX_BYTES:
        retain.append(document)
    body = document.find(_W_BODY)
    if body is None:
        raise ParseError("not a Word document: it has no body")
    _docx_prune(body)
    reader = _DocxBody(body, _DocxStyles(styles_element))
    index, count = shard
    starts = reader.shard_starts(count)
    return reader.blocks(starts[index], starts[index + 1])


# --- Markdown ---------------------------------------------------------------------

_MD_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_MD_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_MD_TASK = re.compile(r"^\[[ xX]\][ \t]+")
_MD_QUOTE = re.compile(r"^ {0,3}>[ \t]?")
_MD_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+")
_MD_TABLE_SEP = re.compile(
    r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$"
)
_MD_FRONT_MATTER_KEY = re.compile(r"^[\w-]+[ \t]*:")

_MD_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
_MD_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_MD_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>", re.DOTALL)
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_MD_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_MD_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _strip_markdown_inline(text: str) -> str:
    pieces = _MD_CODE_SPAN.split(text)
    out: list[str] = []
    # split() with two groups yields: text, fence, code, text, fence, code, ...
    for index in range(0, len(pieces), 3):
        plain = pieces[index]
        plain = _MD_IMAGE.sub("", plain)
        plain = _MD_LINK.sub(r"\1", plain)
        plain = _MD_AUTOLINK.sub(r"\1", plain)
        plain = _MD_HTML_TAG.sub("", plain)
        plain = _MD_STRONG.sub(r"\2", plain)
        plain = _MD_EM_STAR.sub(r"\1", plain)
        plain = _MD_EM_UNDERSCORE.sub(r"\1", plain)
        plain = _MD_STRIKE.sub(r"\1", plain)
        plain = _MD_ESCAPE.sub(r"\1", plain)
        out.append(unescape(plain))
        if index + 2 < len(pieces):
            out.append(pieces[index + 2].strip())
    return "".join(out)


def _skip_front_matter(lines: list[str]) -> list[str]:
    if not lines or lines[0].strip() != "---":
        return lines
    for end in range(1, min(len(lines), 100)):
        if lines[end].strip() in ("---", "..."):
            body = [line for line in lines[1:end] if line.strip()]
            if body and all(
                _MD_FRONT_MATTER_KEY.match(line) or line[:1] in " \t-" for line in body
            ):
                return lines[end + 1 :]
            break
    return lines


def _md_table_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [_strip_markdown_inline(cell).strip() for cell in cells]


class _MarkdownReader:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._stack: list[tuple[int, str]] = []
        self._path: tuple[str, ...] = ()
        self._lines: list[str] = []
        self._kind = PARAGRAPH

    def flush(self) -> None:
        if self._lines:
            text = " ".join(_strip_markdown_inline(_join_lines(self._lines)).split())
            if text:
                self.emit(text, self._kind)
        self._lines = []
        self._kind = PARAGRAPH

    def emit(self, text: str, kind: str) -> None:
        self.blocks.append(Block(text=text, heading_path=self._path, kind=kind))

    def heading(self, level: int, raw: str) -> None:
        self.flush()
        text = " ".join(_strip_markdown_inline(raw).split())
        if not text:
            return
        self._stack = [(lvl, title) for lvl, title in self._stack if lvl < level]
        self._stack.append((level, text))
        self._path = tuple(title for _, title in self._stack)
        self.emit(text, HEADING)

    def read(self, text: str) -> list[Block]:
        lines = _skip_front_matter(_clean_text(text).split("\n"))
        index = 0
        while index < len(lines):
            index = self._read_line(lines, index)
        self.flush()
        return self.blocks

    def _read_line(self, lines: list[str], index: int) -> int:
        line = lines[index]
        fence = _MD_FENCE.match(line)
        if fence:
            return self._read_fence(lines, index, fence.group(1))
        if not line.strip():
            self.flush()
            return index + 1
        while _MD_QUOTE.match(line):
            line = _MD_QUOTE.sub("", line, count=1)
        atx = _MD_ATX.match(line)
        if atx:
            self.heading(len(atx.group(1)), atx.group(2) or "")
            return index + 1
        setext = _MD_SETEXT.match(line)
        if setext and self._lines and self._kind == PARAGRAPH:
            raw = " ".join(self._lines)
            self._lines = []
            self.heading(1 if setext.group(1)[0] == "=" else 2, raw)
            return index + 1
        if _MD_RULE.match(line):
            self.flush()
            return index + 1
        if (
            "|" in line
            and index + 1 < len(lines)
            and "|" in lines[index + 1]
            and _MD_TABLE_SEP.match(lines[index + 1])
        ):
            return self._read_table(lines, index)
        item = _MD_LIST_ITEM.match(line)
        if item:
            self.flush()
            self._kind = LIST_ITEM
            self._lines.append(_MD_TASK.sub("", item.group(1) or ""))
            return index + 1
        if _MD_REF_DEF.match(line):
            return index + 1
        self._lines.append(line)
        return index + 1

    def _read_fence(self, lines: list[str], index: int, marker: str) -> int:
        self.flush()
        end = index + 1
        closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        code = textwrap.dedent("\n".join(lines[index + 1 : end])).strip("\n")
        if code.strip():
            self.emit(code, PARAGRAPH)
        return end + 1

    def _read_table(self, lines: list[str], index: int) -> int:
        self.flush()
        header = table_row_text(_md_table_cells(lines[index]))
        if header:
            self.emit(header, TABLE_ROW)
        index += 2
        while index < len(lines) and lines[index].strip() and "|" in lines[index]:
            row = table_row_text(_md_table_cells(lines[index]))
            if row:
                self.emit(row, TABLE_ROW)
            index += 1
        return index


def parse_markdown(data: bytes) -> list[Block]:
    return _MarkdownReader().read(decode_text(data))


# --- HTML -------------------------------------------------------------------------

_HTML_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.()+-]+)""", re.IGNORECASE
)
_HTML_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "title",
        "svg",
        "iframe",
        "object",
        "canvas",
        "select",
        "textarea",
    }
)
_HTML_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
# Elements whose end tag is often omitted: hiding them could swallow the page.
_HTML_OPTIONAL_END = frozenset(
    {"p", "li", "dt", "dd", "tr", "td", "th", "option", "tbody", "thead", "tfoot"}
)
_HTML_BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "ul",
    }
)
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_HTML_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_WHITESPACE = re.compile(r"\s+")
_HTML_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


class _TableState:
    def __init__(self) -> None:
        self.row: list[str] | None = None
        self.cell: list[str] | None = None


class _HTMLTextExtractor(HTMLParser):
    """Collects visible text as blocks; block elements and <br> end a paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._stack: list[tuple[int, str]] = []
        self._path: tuple[str, ...] = ()
        self._parts: list[str] = []
        self._preformatted = False
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._pre_depth = 0
        self._list_depth = 0
        self._heading: int | None = None
        self._tables: list[_TableState] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        if tag in _HTML_SKIP or _html_hidden(attrs):
            if tag not in _HTML_VOID and tag not in _HTML_OPTIONAL_END:
                self._skip_tag, self._skip_depth = tag, 1
                return
            if tag in _HTML_VOID:
                return
        self._start(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is None and tag in _HTML_VOID and not _html_hidden(attrs):
            self._start(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth <= 0:
                    self._skip_tag = None
            return
        self._end(tag)

    def handle_data(self, data: str) -> None:
        if self._skip_tag is not None:
            return
        cell = self._cell()
        if cell is not None:
            cell.append(data)
        elif self._pre_depth:
            self._parts.append(data)
            self._preformatted = True
        elif not self._tables or data.strip():
            # Keep one space at the edges: "<b>big</b> deal" must not glue words.
            self._parts.append(_WHITESPACE.sub(" ", data))

    def close(self) -> None:
        super().close()
        while self._tables:
            self._end_table()
        self._flush()

    def _cell(self) -> list[str] | None:
        return self._tables[-1].cell if self._tables else None

    def _start(self, tag: str) -> None:
        cell = self._cell()
        if tag == "table":
            if cell is None:
                self._flush()
            self._tables.append(_TableState())
        elif tag == "tr" and self._tables:
            self._end_row()
            self._tables[-1].row = []
        elif tag in ("td", "th") and self._tables:
            self._end_cell()
            table = self._tables[-1]
            if table.row is None:
                table.row = []
            table.cell = []
        elif cell is not None:
            if tag in _HTML_BLOCK or tag in _HTML_HEADINGS or tag == "br":
                cell.append(" ")
        elif tag in _HTML_HEADINGS:
            self._flush()
            self._heading = _HTML_HEADINGS[tag]
        elif tag == "br":
            self._parts.append("\n")
        elif tag in _HTML_BLOCK:
            self._flush()
            if tag == "pre":
                self._pre_depth += 1
            elif tag in _HTML_LISTS:
                self._list_depth += 1

    def _end(self, tag: str) -> None:
        cell = self._cell()
        if tag == "table" and self._tables:
            self._end_table()
        elif tag == "tr" and self._tables:
            self._end_row()
        elif tag in ("td", "th") and self._tables:
            self._end_cell()
        elif cell is not None:
            if tag in _HTML_BLOCK or tag in _HTML_HEADINGS:
                cell.append(" ")
        elif tag in _HTML_HEADINGS or tag in _HTML_BLOCK:
            self._flush()
            if tag == "pre":
                self._pre_depth = max(0, self._pre_depth - 1)
            elif tag in _HTML_LISTS:
                self._list_depth = max(0, self._list_depth - 1)

    def _end_cell(self) -> None:
        table = self._tables[-1]
        if table.cell is not None and table.row is not None:
            table.row.append(_join_lines(["".join(table.cell)]))
        table.cell = None

    def _end_row(self) -> None:
        self._end_cell()
        table = self._tables[-1]
        text = table_row_text(table.row or [])
        if text:
            self._emit(text, TABLE_ROW)
        table.row = None

    def _end_table(self) -> None:
        self._end_row()
        self._tables.pop()

    def _flush(self) -> None:
        raw = "".join(self._parts)
        self._parts = []
        preformatted, self._preformatted = self._preformatted, False
        level, self._heading = self._heading, None
        if level is not None:
            text = _join_lines(raw.split("\n"))
            if text:
                self._stack = [(lvl, t) for lvl, t in self._stack if lvl < level]
                self._stack.append((level, text))
                self._path = tuple(t for _, t in self._stack)
                self._emit(text, HEADING)
        elif preformatted:
            text = "\n".join(line.rstrip() for line in raw.split("\n")).strip("\n")
            if text.strip():
                self._emit(text, PARAGRAPH)
        else:
            kind = LIST_ITEM if self._list_depth else PARAGRAPH
            for paragraph in _paragraphs(raw):
                self._emit(paragraph, kind)

    def _emit(self, text: str, kind: str) -> None:
        self.blocks.append(Block(text=text, heading_path=self._path, kind=kind))


def _html_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if name == "hidden":
            return True
        if name == "aria-hidden" and (value or "").lower() == "true":
            return True
        if name == "style" and value and _HTML_HIDDEN_STYLE.search(value):
            return True
    return False


def html_declared_charset(data: bytes) -> str | None:
    """The charset named by a <meta> tag near the start of the document, if any."""
    match = _HTML_CHARSET.search(data[:8192])
    return match.group(1).decode("ascii") if match else None


def parse_html(data: bytes) -> list[Block]:
    extractor = _HTMLTextExtractor()
    extractor.feed(_clean_text(decode_text(data, html_declared_charset(data))))
    extractor.close()
    return extractor.blocks


# --- plain text -------------------------------------------------------------------


def parse_text(data: bytes) -> list[Block]:
    return [Block(text=p) for p in _paragraphs(_clean_text(decode_text(data)))]


_PARSERS: dict[str, Callable[[bytes], list[Block]]] = {
    "pdf": parse_pdf,
    "docx": parse_docx,
    "markdown": parse_markdown,
    "html": parse_html,
    "text": parse_text,
}
