"""Office Open XML packages (DOCX, XLSX, PPTX): the zip checked against the limits
before anything is inflated, members inflated in bounded chunks that may not pass
their declared size, and parts found the way Office finds them, through content
types and relationships.

Only the parts asked for are inflated and parsed, as plain lxml: python-docx's
`Document()` parses every XML part into its own element classes, and even its
`PackageReader` inflates every part, images included.

A file saved with a password is no zip but an OLE container holding the encrypted
package: it fails as `PasswordProtected`. Strict Open XML (ISO 29500 Strict) is read
as transitional: its namespaces and relationship types are rewritten as each part
is read (`transitional_xml`), or in a whole copy of the package for libraries that
read only transitional (`transitional_package`).
"""

from __future__ import annotations

import copy
import io
import re
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import olefile
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PACKAGE_URI, PackURI
from lxml import etree

from ..blocks import FileTooLarge, ParseError, ParseLimits, PasswordProtected

if TYPE_CHECKING:
    from lxml.etree import _Element

MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_OPC_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_OPC_RELATIONSHIP = (
    "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
)
# python-docx's parser options, without its element classes; no entities, no network.
_XML_PARSER = etree.XMLParser(
    remove_blank_text=True, resolve_entities=False, no_network=True
)
_RATIO_CHECK_BYTES = 1024 * 1024
# Inflated bytes per read of a member: zipfile's own read() inflates a member's
# whole stream at once and only then cuts it to the declared size.
_READ_CHUNK_BYTES = 64 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# Strict Open XML names its namespaces http://purl.oclc.org/ooxml/<group>/<name>
# where transitional has http://schemas.openxmlformats.org/<group>/2006/<name>;
# relationship types follow the same rule, but for these few, spelled differently.
STRICT_MARKER = b"http://purl.oclc.org/ooxml/"
STRICT_GROUPS = (
    b"officeDocument",
    b"wordprocessingml",
    b"spreadsheetml",
    b"presentationml",
    b"drawingml",
    b"schemaLibrary",
)
_TRANSITIONAL = b"http://schemas.openxmlformats.org/"
STRICT_EXCEPTIONS = {
    STRICT_MARKER + b"officeDocument/relationships/extendedProperties": _TRANSITIONAL
    + b"officeDocument/2006/relationships/extended-properties",
    STRICT_MARKER + b"officeDocument/relationships/customProperties": _TRANSITIONAL
    + b"officeDocument/2006/relationships/custom-properties",
    STRICT_MARKER + b"officeDocument/relationships/metadata/thumbnail": _TRANSITIONAL
    + b"package/2006/relationships/metadata/thumbnail",
    STRICT_MARKER + b"officeDocument/extendedProperties": _TRANSITIONAL
    + b"officeDocument/2006/extended-properties",
    STRICT_MARKER + b"officeDocument/customProperties": _TRANSITIONAL
    + b"officeDocument/2006/custom-properties",
}
_STRICT_URI = re.compile(
    re.escape(STRICT_MARKER)
    + rb"("
    + b"|".join(STRICT_GROUPS)
    + rb")/([A-Za-z0-9_./-]*)"
)
_XML_MEMBER = re.compile(r"\.(?:xml|rels|vml)$", re.IGNORECASE)


def transitional_xml(xml: bytes) -> bytes:
    """A part's XML with Strict Open XML namespaces and relationship types rewritten
    as their transitional equivalents; transitional XML comes back as it is."""
    if STRICT_MARKER not in xml:
        return xml
    return _STRICT_URI.sub(_transitional_uri, xml)


def _transitional_uri(match: re.Match[bytes]) -> bytes:
    exception = STRICT_EXCEPTIONS.get(match.group(0))
    if exception is not None:
        return exception
    group, name = match.group(1), match.group(2)
    return _TRANSITIONAL + group + b"/2006/" + name


def reject_encrypted(data: bytes, *, label: str) -> None:
    """`PasswordProtected` for a package saved with a password; `ParseError` for
    any other OLE file (a legacy .doc, .xls or .ppt under an OOXML name).

    Office encrypts the whole package and stores it as the `EncryptedPackage`
    stream of an OLE (compound file) container (MS-OFFCRYPTO).
    """
    if not data.startswith(_OLE_MAGIC):
        return
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as container:
            encrypted = container.exists("EncryptedPackage")
    except MemoryError:
        raise
    except Exception as exc:  # olefile fails in many ways on a damaged container
        raise ParseError(f"not a valid {label} archive: a damaged OLE file") from exc
    if encrypted:
        raise PasswordProtected(f"the {label} is protected by a password")
    raise ParseError(
        f"not a valid {label} archive: a legacy Office file (save it as {label})"
    )


def check_archive(data: bytes, limits: ParseLimits, *, label: str) -> None:
    """Refuse an encrypted package (`reject_encrypted`) and a zip bomb from its
    central directory, before anything is inflated.

    The declared sizes are then a hard bound: members are read through
    `BoundedZipFile`, which fails as soon as one inflates to more than it declares.
    `label` names the format in the reason ("DOCX").
    """
    reject_encrypted(data, label=label)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ParseError(f"not a valid {label} archive") from exc
    total = sum(info.file_size for info in members)
    limit = limits.max_docx_uncompressed_bytes
    if limit is not None and total > limit:
        raise FileTooLarge(
            f"the {label} holds {total // 2**20} MiB uncompressed, more than the "
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
                f"a part of the {label} is compressed more than {ratio:g} to 1 "
                "(a zip bomb)"
            )


def check_members(data: bytes, *, label: str) -> None:
    """Inflate every member once, in bounded chunks, and refuse a package whose
    members inflate to more than its zip directory declares.

    For packages a library opens itself (openpyxl, python-pptx), with zipfile's
    unbounded read: once every member is shown to end within its declared size,
    which `check_archive` bounded, those reads are bounded too.
    """
    with _zip_errors(label), BoundedZipFile(io.BytesIO(data), label=label) as archive:
        for info in archive.infolist():
            with archive.open(info) as member:
                while member.read(_READ_CHUNK_BYTES):
                    pass


class BoundedZipFile(zipfile.ZipFile):
    """A zip whose members are inflated in bounded chunks and may not inflate past
    their declared size (`FileTooLarge`, "a zip bomb").

    zipfile believes the central directory: it inflates a member's whole stream and
    then cuts it to the declared size, where the CRC may even match. Here a member is
    opened as if it declared one byte more, so that a byte past its size shows, and
    its CRC is checked here (zipfile's would fail on that byte first).
    """

    def __init__(self, file: io.BytesIO, *, label: str) -> None:
        super().__init__(file)
        self.label = label

    def open(self, name, mode="r", pwd=None, *, force_zip64=False):  # type: ignore[override]
        if mode != "r":
            return super().open(name, mode, pwd, force_zip64=force_zip64)
        info = name if isinstance(name, zipfile.ZipInfo) else self.getinfo(name)
        probe = copy.copy(info)
        probe.file_size = info.file_size + 1
        del probe.CRC  # zipfile checks a CRC only where its ZipInfo has one
        return _BoundedMember(super().open(probe, "r", pwd), info, self.label)


class _BoundedMember(io.BufferedIOBase):
    """A member's inflated bytes, at most `_READ_CHUNK_BYTES` inflated per step."""

    def __init__(self, raw: zipfile.ZipExtFile, info: zipfile.ZipInfo, label: str):
        super().__init__()
        self._raw = raw
        self._info = info
        self._left = info.file_size
        self._crc = 0
        self._label = label

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            parts = []
            while part := self.read(_READ_CHUNK_BYTES):
                parts.append(part)
            return b"".join(parts)
        data = self._raw.read(min(size, _READ_CHUNK_BYTES))
        self._left -= len(data)
        if self._left < 0:
            raise FileTooLarge(
                f"a part of the {self._label} inflates to more than its zip "
                "directory declares (a zip bomb)"
            )
        self._crc = zlib.crc32(data, self._crc)
        if size and not data and self._crc != self._info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 for {self._info.filename!r}")
        return data

    def read1(self, size: int = -1) -> bytes:
        return self.read(size if size >= 0 else _READ_CHUNK_BYTES)

    def close(self) -> None:
        self._raw.close()
        super().close()


@contextmanager
def _zip_errors(label: str) -> Iterator[None]:
    """A damaged zip or member is "not a valid {label} archive"; limits pass."""
    try:
        yield
    except (ParseError, MemoryError):
        raise
    except Exception as exc:  # zipfile fails in many ways on a damaged archive
        raise ParseError(f"not a valid {label} archive") from exc


def transitional_package(
    data: bytes, limits: ParseLimits | None = None, *, label: str = "Office"
) -> bytes:
    """A transitional copy of a Strict Open XML package, for libraries that read
    only transitional (openpyxl, python-pptx); any other package comes back as it is.

    Checked first like every package (`check_archive`), so the copy is bounded by
    the same limits; every XML member is rewritten with `transitional_xml`, the
    others are copied as they are.
    """
    check_archive(data, limits or ParseLimits(), label=label)
    try:
        with BoundedZipFile(io.BytesIO(data), label=label) as original:
            if not _is_strict(original):
                return data
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as copy:
                for info in original.infolist():
                    member = original.read(info)
                    if _XML_MEMBER.search(info.filename):
                        member = transitional_xml(member)
                    copy.writestr(info, member)
    except (ParseError, MemoryError):
        raise
    except Exception as exc:  # a damaged member
        raise ParseError(f"not a valid {label} archive") from exc
    return buffer.getvalue()


def _is_strict(archive: zipfile.ZipFile) -> bool:
    """Strict packages point to their main part with a Strict relationship type."""
    try:
        relationships = archive.read("_rels/.rels")
    except KeyError:
        return False
    return STRICT_MARKER in relationships


class Package:
    """An opened package; every failure to read it is a ParseError naming `label`.

    Unreadable zip members, content types and package relationships make "not a
    valid {label} archive"; malformed XML in the parts read after the main part was
    found makes "the {label} holds malformed XML".
    """

    def __init__(self, data: bytes, *, label: str) -> None:
        self.label = label
        with self._errors(malformed_xml=False):
            self._archive = BoundedZipFile(io.BytesIO(data), label=label)
            self._content_types = self._xml("[Content_Types].xml")

    def main_part(self, content_types: frozenset[str], wrong_kind: str) -> PackURI:
        """The package's office document, if it has one of `content_types`; else
        ParseError(`wrong_kind`)."""
        with self._errors(malformed_xml=False):
            main = self._target(PACKAGE_URI, RT.OFFICE_DOCUMENT)
        if (
            main is None
            or not self.has(main)
            or self._content_type(main) not in content_types
        ):
            raise ParseError(wrong_kind)
        return main

    def has(self, part: PackURI) -> bool:
        return part.membername in self._archive.NameToInfo

    def related(self, source: PackURI, relationship_type: str) -> PackURI | None:
        """The part `source`'s first internal relationship of that type points to."""
        with self._errors():
            return self._target(source, relationship_type)

    def read(self, part: PackURI) -> _Element:
        with self._errors():
            return self._xml(part.membername)

    @contextmanager
    def _errors(self, *, malformed_xml: bool = True) -> Iterator[None]:
        try:
            yield
        except etree.XMLSyntaxError as exc:
            if malformed_xml:
                raise ParseError(f"the {self.label} holds malformed XML") from exc
            raise ParseError(f"not a valid {self.label} archive") from exc
        except (ParseError, MemoryError):
            raise
        except Exception as exc:  # a damaged member, a relationship without a target
            raise ParseError(f"not a valid {self.label} archive") from exc

    def _xml(self, member: str) -> _Element:
        xml = transitional_xml(self._archive.read(member))
        return etree.fromstring(xml, _XML_PARSER)

    def _target(self, source: PackURI, relationship_type: str) -> PackURI | None:
        rels = source.rels_uri.membername
        if rels not in self._archive.NameToInfo:
            return None
        for relationship in self._xml(rels).iterchildren(_OPC_RELATIONSHIP):
            if (
                relationship.get("Type") == relationship_type
                and relationship.get("TargetMode") != "External"
            ):
                return PackURI.from_rel_ref(source.baseURI, relationship.get("Target"))
        return None

    def _content_type(self, part: PackURI) -> str | None:
        """By the part's override, else by its extension's default (case-blind)."""
        name, extension = part.lower(), part.ext.lower()
        for override in self._content_types.iterchildren(f"{_OPC_TYPES}Override"):
            if override.get("PartName", "").lower() == name:
                return override.get("ContentType")
        for default in self._content_types.iterchildren(f"{_OPC_TYPES}Default"):
            if default.get("Extension", "").lower() == extension:
                return default.get("ContentType")
        return None


def with_forward_slashes(data: bytes, *, label: str = "Office") -> bytes:
    """The package with its part names written with "/", as the standard has them.

    Some exporters write `xl\\workbook.xml`, which Office reads and openpyxl and
    python-pptx do not. Rewritten (stored, not compressed) only when that happens;
    call it after `check_archive`, which bounds what is inflated here.
    """
    with BoundedZipFile(io.BytesIO(data), label=label) as archive:
        members = archive.infolist()
        if not any("\\" in info.filename for info in members):
            return data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as rewritten:
            for info in members:
                name = info.filename.replace("\\", "/")
                rewritten.writestr(name, archive.read(info))
    return buffer.getvalue()
