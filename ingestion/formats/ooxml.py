"""Office Open XML packages (DOCX now; XLSX and PPTX share the format): the zip
checked against the limits before anything is inflated, and parts found the way
Office finds them, through content types and relationships.

Only the parts asked for are inflated and parsed, as plain lxml: python-docx's
`Document()` parses every XML part into its own element classes, and even its
`PackageReader` inflates every part, images included.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PACKAGE_URI, PackURI
from lxml import etree

from ..blocks import FileTooLarge, ParseError, ParseLimits

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


def check_archive(data: bytes, limits: ParseLimits, *, label: str) -> None:
    """Refuse a zip bomb from its central directory, before anything is inflated.

    The declared sizes are a hard bound: `zipfile` stops inflating a member at its
    declared size (and then fails its CRC), so a member cannot lie its way past this.
    `label` names the format in the reason ("DOCX").
    """
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


class Package:
    """An opened package; every failure to read it is a ParseError naming `label`.

    Unreadable zip members, content types and package relationships make "not a
    valid {label} archive"; malformed XML in the parts read after the main part was
    found makes "the {label} holds malformed XML".
    """

    def __init__(self, data: bytes, *, label: str) -> None:
        self.label = label
        with self._errors(malformed_xml=False):
            self._archive = zipfile.ZipFile(io.BytesIO(data))
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
        except MemoryError:
            raise
        except Exception as exc:  # a damaged member, a relationship without a target
            raise ParseError(f"not a valid {self.label} archive") from exc

    def _xml(self, member: str) -> _Element:
        return etree.fromstring(self._archive.read(member), _XML_PARSER)

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


def with_forward_slashes(data: bytes) -> bytes:
    """The package with its part names written with "/", as the standard has them.

    Some exporters write `xl\\workbook.xml`, which Office reads and openpyxl and
    python-pptx do not. Rewritten (stored, not compressed) only when that happens;
    call it after `check_archive`, which bounds what is inflated here.
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        if not any("\\" in info.filename for info in members):
            return data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as rewritten:
            for info in members:
                name = info.filename.replace("\\", "/")
                rewritten.writestr(name, archive.read(info))
    return buffer.getvalue()
