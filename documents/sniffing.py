"""How a file's bytes are recognised (no Django): one `Sniff` per way of saving.

A sniff reads the first bytes (`head`, 8 KiB) and, where those are not enough
(a zip's members, an OLE container's streams), the seekable file itself, which it
leaves at its start. It answers whether the bytes can be what the name says;
the parser reports what is wrong inside later.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from typing import BinaryIO

import olefile

from core.text import COMMON_TEXT

Sniff = Callable[[bytes, BinaryIO], bool]

HEAD_BYTES = 8192
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP = b"PK\x03\x04"
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


def signature(*prefixes: bytes) -> Sniff:
    """Files that start with one of `prefixes`."""

    def starts_with(head: bytes, file: BinaryIO) -> bool:
        return head.startswith(prefixes)

    return starts_with


def pdf_header(head: bytes, file: BinaryIO) -> bool:
    """A PDF: its header may follow up to 1 KiB of junk, as readers allow."""
    return b"%PDF-" in head[:1024]


def ooxml_package(folder: str) -> Sniff:
    """An Office Open XML package whose main part sits in `folder` ("word/"),
    whatever its conformance class; a damaged zip, or one saved with a password,
    is still one, for the parser to report."""

    def is_package(head: bytes, file: BinaryIO) -> bool:
        if head.startswith(_OLE):
            return _is_encrypted_package(file)
        return head.startswith(_ZIP) and _zip_is_package_or_damaged(file, folder)

    return is_package


def _zip_is_package_or_damaged(file: BinaryIO, folder: str) -> bool:
    try:
        with zipfile.ZipFile(file) as archive:
            return any(name.startswith(folder) for name in archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return True
    finally:
        file.seek(0)


def _is_encrypted_package(file: BinaryIO) -> bool:
    """An OLE container holding the encrypted package: the worker says it is
    protected."""
    try:
        with olefile.OleFileIO(file) as container:
            return container.exists("EncryptedPackage")
    except (OSError, ValueError):
        return False
    finally:
        file.seek(0)


def looks_like_text(head: bytes, file: BinaryIO) -> bool:
    """Text in any encoding: no binary signature, few control characters, or
    UTF-16/32 text."""
    if head.startswith(UTF16_BOMS):
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
