"""What an upload is, decided from its extension and its bytes together."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import PurePosixPath

import olefile

from core.errors import DomainError
from core.text import COMMON_TEXT

TEXT_KINDS = {"markdown", "html", "text"}


@dataclass(frozen=True)
class FileKind:
    name: str
    extension: str
    content_type: str


_OOXML = "application/vnd.openxmlformats-officedocument"
KINDS_BY_EXTENSION = {
    ".pdf": FileKind("pdf", ".pdf", "application/pdf"),
    ".docx": FileKind("docx", ".docx", f"{_OOXML}.wordprocessingml.document"),
    ".pptx": FileKind("pptx", ".pptx", f"{_OOXML}.presentationml.presentation"),
    ".xlsx": FileKind("xlsx", ".xlsx", f"{_OOXML}.spreadsheetml.sheet"),
    ".md": FileKind("markdown", ".md", "text/markdown"),
    ".markdown": FileKind("markdown", ".md", "text/markdown"),
    ".html": FileKind("html", ".html", "text/html"),
    ".htm": FileKind("html", ".html", "text/html"),
    ".txt": FileKind("text", ".txt", "text/plain"),
    ".png": FileKind("image", ".png", "image/png"),
    ".jpg": FileKind("image", ".jpg", "image/jpeg"),
    ".jpeg": FileKind("image", ".jpg", "image/jpeg"),
    ".tif": FileKind("image", ".tif", "image/tiff"),
    ".tiff": FileKind("image", ".tif", "image/tiff"),
}
SUPPORTED = "PDF, DOCX, PPTX, XLSX, Markdown, HTML, plain text, PNG, JPEG or TIFF"

# The folder of an OOXML package's main part, whatever its conformance class
# (transitional or strict): word/document.xml, ppt/presentation.xml, xl/workbook.xml.
_OOXML_FOLDERS = {"docx": "word/", "pptx": "ppt/", "xlsx": "xl/"}
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_IMAGE_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/tiff": (b"II*\x00", b"MM\x00*"),
}

_BINARY_SIGNATURES = (
    b"%PDF-",
    b"PK\x03\x04",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"II*\x00",
    b"MM\x00*",
    b"\x7fELF",
    b"MZ",
    b"\xd0\xcf\x11\xe0",  # legacy Office (.doc, .xls), encrypted OOXML
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
    if kind is None:
        raise UnsupportedMediaType(
            f"Files of type '{suffix or 'none'}' are not supported; upload {SUPPORTED}."
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
    if kind.name in _OOXML_FOLDERS:
        if head.startswith(_OLE):
            return _is_encrypted_package(uploaded_file)
        return head.startswith(b"PK\x03\x04") and _zip_is_package_or_damaged(
            uploaded_file, _OOXML_FOLDERS[kind.name]
        )
    if kind.name == "image":
        return head.startswith(_IMAGE_SIGNATURES[kind.content_type])
    return _looks_like_text(head)


def _zip_is_package_or_damaged(uploaded_file, folder: str) -> bool:
    # A damaged archive is still an upload of its kind; the parser reports it later.
    try:
        with zipfile.ZipFile(uploaded_file) as archive:
            return any(name.startswith(folder) for name in archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return True
    finally:
        uploaded_file.seek(0)


def _is_encrypted_package(uploaded_file) -> bool:
    """An OOXML file saved with a password: an OLE container holding the encrypted
    package. It is accepted as what it is, and the worker says it is protected."""
    try:
        with olefile.OleFileIO(uploaded_file) as container:
            return container.exists("EncryptedPackage")
    except (OSError, ValueError):
        return False
    finally:
        uploaded_file.seek(0)


def _looks_like_text(head: bytes) -> bool:
    if head.startswith(_UTF16_BOMS):
        return True
    if head.startswith(_BINARY_SIGNATURES):
        return False
    if b"\x00" in head or _controls(head) > len(head) // 100:
        return _looks_like_wide_text(head)
    return True


def _controls(head: bytes) -> int:
    return sum(1 for byte in head if byte < 32 and byte not in b"\t\n\r\x0c\x1b")


# Binary read as UTF-16 scatters over the whole plane (Han alone is a third of
# it), wide text read the wrong way round too.
_TEXT_CHARACTERS = re.compile(f"[{COMMON_TEXT}]")
_WIDE_ENCODINGS = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
_MIN_TEXT_SHARE = 0.95


def _looks_like_wide_text(head: bytes) -> bool:
    """UTF-16 or UTF-32 saved without a byte order mark."""
    for encoding in _WIDE_ENCODINGS:
        width = 4 if "32" in encoding else 2
        sample = head[: len(head) - len(head) % width]
        try:
            text = sample.decode(encoding)
        except UnicodeDecodeError:
            continue
        # The last character may have been cut in two by the sample's end.
        text = text[:-1] if len(text) > 1 else text
        if text and "\x00" not in text:
            share = len(_TEXT_CHARACTERS.findall(text)) / len(text)
            if share >= _MIN_TEXT_SHARE:
                return True
    return False


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
