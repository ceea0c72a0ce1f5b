"""Every file format Curator reads, declared once (no Django).

A `FileKind` is a format as its parser sees it ("pdf", "image"); its parser is
the `parse` of `ingestion/formats/<name>.py`. Its `FileType`s are the ways files
of it are saved: the content type stored on the document, the extensions that
name it, how its bytes are recognised. Whatever differs by format reads it here:
uploads (extensions, sniffing, blank text), the worker (lanes, parse time limits,
parser shards) and the pages (what a page is called, which originals are drawn).
Adding a format: docs/architecture.md, "A new file format".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from .sniffing import Sniff, looks_like_text, ooxml_package, pdf_header, signature


@dataclass(frozen=True)
class FileType:
    """One way of saving a kind of file.

    `label` names it to people ("PDF", "plain text"); `content_type` is stored on
    its documents; `extensions` name it, the first one its stored original;
    `sniff` says whether bytes named so are indeed of this type.
    """

    label: str
    content_type: str
    extensions: tuple[str, ...]
    sniff: Sniff

    @property
    def extension(self) -> str:
        return self.extensions[0]


@dataclass(frozen=True)
class FileKind:
    """A format as its parser reads it.

    `text`: read whole by a parser whose time grows with the size alone (its
    time limit scales with the size; whitespace alone is an empty upload).
    `read_by_ocr`: every page is read by OCR, so it is heavy work whatever its
    size. `split`: how several parser processes share one file, by "pages" or
    at "headings". `unit`: what a block's page counts. `drawn_as`: the renderer
    that draws its pages beside their text (web/page_render_child.py), if any.
    """

    name: str
    types: tuple[FileType, ...]
    text: bool = False
    read_by_ocr: bool = False
    split: Literal["pages", "headings"] | None = None
    unit: Literal["page", "slide", "sheet"] = "page"
    drawn_as: Literal["pdf", "image"] | None = None


class FileKinds:
    """The declared kinds, found by name, extension or stored content type; a
    lookup of anything undeclared is a ValueError."""

    def __init__(self, *kinds: FileKind) -> None:
        self._kinds = kinds
        self._by_name = _unique((kind.name, kind) for kind in kinds)
        self._by_extension = _unique(
            (extension, (kind, file_type))
            for kind in kinds
            for file_type in kind.types
            for extension in file_type.extensions
        )
        self._by_content_type = _unique(
            (file_type.content_type, kind) for kind in kinds for file_type in kind.types
        )

    def __iter__(self) -> Iterator[FileKind]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def named(self, name: str) -> FileKind:
        try:
            return self._by_name[name]
        except KeyError:
            raise ValueError(f"unknown file kind {name[:40]}") from None

    def for_extension(self, extension: str) -> tuple[FileKind, FileType]:
        """The kind and type a file name's extension (".pdf") says."""
        try:
            return self._by_extension[extension.lower()]
        except KeyError:
            raise ValueError(f"no file type has the extension {extension}") from None

    def for_content_type(self, content_type: str) -> FileKind:
        """The kind of a stored document's content type."""
        try:
            return self._by_content_type[content_type]
        except KeyError:
            raise ValueError(f"no parser for {content_type}") from None

    @property
    def extensions(self) -> tuple[str, ...]:
        return tuple(self._by_extension)

    def listed(self) -> str:
        """Every type's label in a sentence: "PDF, DOCX, ... or TIFF"."""
        labels = [file_type.label for kind in self for file_type in kind.types]
        return ", ".join(labels[:-1]) + " or " + labels[-1]


def _unique(pairs: Iterable[tuple[str, object]]) -> dict:
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"{key} is declared twice")
        found[key] = value
    return found


_OOXML = "application/vnd.openxmlformats-officedocument"

FILE_KINDS = FileKinds(
    FileKind(
        "pdf",
        (FileType("PDF", "application/pdf", (".pdf",), pdf_header),),
        split="pages",
        drawn_as="pdf",
    ),
    FileKind(
        "docx",
        (
            FileType(
                "DOCX",
                f"{_OOXML}.wordprocessingml.document",
                (".docx",),
                ooxml_package("word/"),
            ),
        ),
        split="headings",
    ),
    FileKind(
        "pptx",
        (
            FileType(
                "PPTX",
                f"{_OOXML}.presentationml.presentation",
                (".pptx",),
                ooxml_package("ppt/"),
            ),
        ),
        unit="slide",
    ),
    FileKind(
        "xlsx",
        (
            FileType(
                "XLSX",
                f"{_OOXML}.spreadsheetml.sheet",
                (".xlsx",),
                ooxml_package("xl/"),
            ),
        ),
        unit="sheet",
    ),
    FileKind(
        "markdown",
        (FileType("Markdown", "text/markdown", (".md", ".markdown"), looks_like_text),),
        text=True,
    ),
    FileKind(
        "html",
        (FileType("HTML", "text/html", (".html", ".htm"), looks_like_text),),
        text=True,
    ),
    FileKind(
        "text",
        (FileType("plain text", "text/plain", (".txt",), looks_like_text),),
        text=True,
    ),
    FileKind(
        "image",
        (
            FileType("PNG", "image/png", (".png",), signature(b"\x89PNG\r\n\x1a\n")),
            FileType(
                "JPEG", "image/jpeg", (".jpg", ".jpeg"), signature(b"\xff\xd8\xff")
            ),
            FileType(
                "TIFF",
                "image/tiff",
                (".tif", ".tiff"),
                signature(b"II*\x00", b"MM\x00*"),
            ),
        ),
        read_by_ocr=True,
        drawn_as="image",
    ),
)
