"""What an upload is, decided from its extension and its bytes together."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import PurePosixPath

from config.errors import DomainError

TEXT_KINDS = {"markdown", "html", "text"}


@dataclass(frozen=True)
class FileKind:
    name: str
    extension: str
    content_type: str


KINDS_BY_EXTENSION = {
    ".pdf": FileKind("pdf", ".pdf", "application/pdf"),
    ".docx": FileKind(
        "docx",
        ".docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ".md": FileKind("markdown", ".md", "text/markdown"),
    ".markdown": FileKind("markdown", ".md", "text/markdown"),
    ".html": FileKind("html", ".html", "text/html"),
    ".htm": FileKind("html", ".html", "text/html"),
    ".txt": FileKind("text", ".txt", "text/plain"),
}

_BINARY_SIGNATURES = (
    b"%PDF-",
    b"PK\x03\x04",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"\x7fELF",
    b"MZ",
    b"\xd0\xcf\x11\xe0",  # legacy Office (.doc, .xls)
    b"\x1f\x8b",  # gzip
)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_WHITESPACE = b" \t\r\n\x0b\x0c"


class UnsupportedMediaType(DomainError):
    error_code = "unsupported_media_type"
    http_status = HTTPStatus.UNSUPPORTED_MEDIA_TYPE


class EmptyDocument(DomainError):
    error_code = "empty_document"
    http_status = HTTPStatus.UNPROCESSABLE_ENTITY
    default_detail = "The file is empty or contains only whitespace."


class FileTooLarge(DomainError):
    error_code = "file_too_large"
    http_status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE


def safe_filename(raw_name: str) -> str:
    """The last path component of what the client sent, for display only."""
    name = PurePosixPath(raw_name.replace("\\", "/")).name.strip()
    name = "".join(ch for ch in name if ch.isprintable())
    return name[-255:] or "upload"


def detect_kind(filename: str, uploaded_file) -> FileKind:
    """The kind of an upload, or `UnsupportedMediaType` when name and bytes disagree."""
    suffix = PurePosixPath(filename.lower()).suffix
    kind = KINDS_BY_EXTENSION.get(suffix)
    supported = "PDF, DOCX, Markdown, HTML or plain text"
    if kind is None:
        raise UnsupportedMediaType(
            f"Files of type '{suffix or 'none'}' are not supported; upload {supported}."
        )
    uploaded_file.seek(0)
    head = uploaded_file.read(8192)
    uploaded_file.seek(0)
    if not _content_matches(kind, head, uploaded_file):
        raise UnsupportedMediaType(
            f"The file is named {suffix} but its content is not {kind.name}."
        )
    return kind


def _content_matches(kind: FileKind, head: bytes, uploaded_file) -> bool:
    if kind.name == "pdf":
        return b"%PDF-" in head[:1024]
    if kind.name == "docx":
        return head.startswith(b"PK\x03\x04") and _zip_is_word_or_damaged(uploaded_file)
    return _looks_like_text(head)


def _zip_is_word_or_damaged(uploaded_file) -> bool:
    # A damaged archive is still a DOCX upload; the parser reports it later.
    try:
        with zipfile.ZipFile(uploaded_file) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return True
    finally:
        uploaded_file.seek(0)


def _looks_like_text(head: bytes) -> bool:
    if head.startswith(_UTF16_BOMS):
        return True
    if head.startswith(_BINARY_SIGNATURES) or b"\x00" in head:
        return False
    controls = sum(1 for byte in head if byte < 32 and byte not in b"\t\n\r\x0c\x1b")
    return controls <= len(head) // 100


def is_blank(uploaded_file, kind: FileKind) -> bool:
    """True for an empty file, or a text file holding nothing but whitespace."""
    if uploaded_file.size == 0:
        return True
    if kind.name not in TEXT_KINDS:
        return False
    uploaded_file.seek(0)
    try:
        for piece in uploaded_file.chunks():
            if piece.startswith((*_UTF16_BOMS, b"\xef\xbb\xbf")):
                piece = piece.lstrip(b"\xef\xbb\xbf\xff\xfe")
                piece = piece.replace(b"\x00", b"")
            if piece.strip(_WHITESPACE):
                return False
        return True
    finally:
        uploaded_file.seek(0)


def kind_for_content_type(content_type: str) -> str:
    """The parser kind ("pdf", "docx", ...) of a stored document's content type."""
    for kind in KINDS_BY_EXTENSION.values():
        if kind.content_type == content_type:
            return kind.name
    raise ValueError(f"no parser for {content_type}")
