"""What an upload is, decided from its extension and its bytes together."""

from __future__ import annotations

from http import HTTPStatus
from pathlib import PurePosixPath

from core.errors import DomainError

from .kinds import FILE_KINDS, FileKind, FileType
from .sniffing import HEAD_BYTES, UTF16_BOMS

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


def detect_kind(filename: str, uploaded_file) -> tuple[FileKind, FileType]:
    """The kind and type of an upload, or `UnsupportedMediaType` when name and
    bytes disagree."""
    suffix = PurePosixPath(filename.lower()).suffix
    try:
        kind, file_type = FILE_KINDS.for_extension(suffix)
    except ValueError:
        raise UnsupportedMediaType(
            f"Files of type '{suffix or 'none'}' are not supported; "
            f"upload {FILE_KINDS.listed()}."
        ) from None
    uploaded_file.seek(0)
    head = uploaded_file.read(HEAD_BYTES)
    uploaded_file.seek(0)
    if not file_type.sniff(head, uploaded_file):
        raise UnsupportedMediaType(
            f"The file is named {suffix} but its content is not {kind.name}."
        )
    return kind, file_type


def is_blank(uploaded_file, kind: FileKind) -> bool:
    """True for an empty file, or a text file holding nothing but whitespace."""
    if uploaded_file.size == 0:
        return True
    if not kind.text:
        return False
    uploaded_file.seek(0)
    try:
        for piece in uploaded_file.chunks():
            if piece.startswith((*UTF16_BOMS, b"\xef\xbb\xbf")):
                piece = piece.lstrip(b"\xef\xbb\xbf\xff\xfe")
                piece = piece.replace(b"\x00", b"")
            if piece.strip(_WHITESPACE):
                return False
        return True
    finally:
        uploaded_file.seek(0)
