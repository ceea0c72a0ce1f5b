"""Files at the edges of the formats, made in memory: saved with a password, saved
as Strict Open XML, or in a legacy container under a new name."""

from __future__ import annotations

import io
import re
import zipfile

from msoffcrypto.format.ooxml import OOXMLFile
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

PASSWORD = "Secret-123"
OWNER_PASSWORD = "owner-secret"
# Written out the way ISO 29500 Strict spells them, independently of ooxml.py.
_TO_STRICT = (
    (
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
        b"extended-properties",
        b"http://purl.oclc.org/ooxml/officeDocument/relationships/extendedProperties",
    ),
    (
        b"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties",
        b"http://purl.oclc.org/ooxml/officeDocument/extendedProperties",
    ),
)
_TRANSITIONAL_URI = re.compile(
    rb"http://schemas\.openxmlformats\.org/"
    rb"(officeDocument|wordprocessingml|spreadsheetml|presentationml|drawingml"
    rb"|schemaLibrary)/2006/"
)
_CONFORMANCE = (
    (b"<w:document ", b'<w:document w:conformance="strict" '),
    (b"<workbook ", b'<workbook conformance="strict" '),
    (b"<p:presentation ", b'<p:presentation conformance="strict" '),
)


def text_pdf(
    text: str = "Annual leave is 25 days.",
    *,
    user_password: str | None = None,
    owner_password: str = OWNER_PASSWORD,
    algorithm: str = "AES-256",
) -> bytes:
    """A one-page PDF showing `text`; encrypted when `user_password` is given ("" is
    the empty user password: it opens without one, as "copy-protected" PDFs do)."""
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
    )
    content = DecodedStreamObject()
    content.set_data(f"BT /F1 12 Tf 72 700 Td ({text}) Tj ET".encode("latin-1"))
    page.replace_contents(content)
    if user_password is not None:
        writer.encrypt(
            user_password=user_password,
            owner_password=owner_password,
            algorithm=algorithm,
        )
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def encrypted_ooxml(package: bytes, password: str = PASSWORD) -> bytes:
    """The package saved with a password, as Office does (ECMA-376 agile
    encryption): an OLE container holding an `EncryptedPackage` stream."""
    encrypted = io.BytesIO()
    OOXMLFile(io.BytesIO(package)).encrypt(password, encrypted)
    return encrypted.getvalue()


def legacy_ole(package: bytes) -> bytes:
    """An OLE container without an encrypted package, as a legacy .doc is: the
    encrypted container with its `EncryptedPackage` stream renamed `WordDocument`."""
    container = bytearray(encrypted_ooxml(package))
    old, new = "EncryptedPackage", "WordDocument"
    # A directory entry: the name in UTF-16, NUL-padded to 64 bytes, then its
    # length in bytes with the terminating NUL.
    entry = old.encode("utf-16-le").ljust(64, b"\0") + (2 * len(old) + 2).to_bytes(
        2, "little"
    )
    start = container.index(entry)
    container[start : start + 66] = new.encode("utf-16-le").ljust(64, b"\0") + (
        2 * len(new) + 2
    ).to_bytes(2, "little")
    return bytes(container)


def strict_ooxml(package: bytes) -> bytes:
    """The package as Strict Open XML: transitional namespaces and relationship
    types rewritten as Strict ones, and the main element marked strict as Office
    marks it."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package)) as original,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as strict,
    ):
        for info in original.infolist():
            member = original.read(info)
            if info.filename.endswith((".xml", ".rels")):
                for transitional, strict_uri in _TO_STRICT:
                    member = member.replace(transitional, strict_uri)
                member = _TRANSITIONAL_URI.sub(
                    rb"http://purl.oclc.org/ooxml/\1/", member
                )
                for root, marked in _CONFORMANCE:
                    member = member.replace(root, marked, 1)
            strict.writestr(info.filename, member)
    return buffer.getvalue()
