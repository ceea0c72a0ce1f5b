"""Hostile inputs made at test time: slow and huge PDFs, zip bombs, cut files."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pytest

from tests.ingestion.conftest import CORPUS


def build_pdf(objects: list[bytes]) -> bytes:
    """A PDF with a correct cross-reference table; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(content: bytes) -> bytes:
    packed = zlib.compress(content, 9)
    return b"<</Length %d/Filter/FlateDecode>>stream\n%s\nendstream" % (
        len(packed),
        packed,
    )


def slow_pdf(operations: int) -> bytes:
    """One page whose content stream shows text `operations` times.

    A few KiB on disk. Its text carries control characters, so pdfium's reading
    of the page is refused and pdfminer reads it (`formats/pdf_reader.py`);
    pdfminer needs about 65 microseconds per operation, so 200,000 of them keep
    a parser busy for many seconds.
    """
    shown = b"BT /F1 12 Tf 72 700 Td (Annual leave\\005\\005) Tj ET\n"
    return build_pdf(
        [
            b"<</Type/Catalog/Pages 2 0 R>>",
            b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R"
            b"/Resources<</Font<</F1 5 0 R>>>>>>",
            _stream(shown * operations),
            b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        ]
    )


def blank_pages_pdf(pages: int) -> bytes:
    """A PDF of `pages` empty pages sharing one empty content stream."""
    kids = b" ".join(b"%d 0 R" % (4 + n) for n in range(pages))
    page = b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 3 0 R>>"
    return build_pdf(
        [
            b"<</Type/Catalog/Pages 2 0 R>>",
            b"<</Type/Pages/Kids[%s]/Count %d>>" % (kids, pages),
            _stream(b""),
            *[page] * pages,
        ]
    )


def shared_stream_pdf(
    pages: int, lines: int, *, text: bytes = b"a b c d e f g h i j k l m n o p"
) -> bytes:
    """`pages` pages pointing at one content stream of `lines` lines (with one
    resources dictionary). With the defaults of 200 pages and 1,000 lines: 29 KB
    that reads as 14,000 chunks, a minute of pdfminer reading every page."""
    content = b"".join(
        b"BT /F1 6 Tf 20 %d Td (%d %s) Tj ET\n" % (780 - (n % 120) * 6, n, text)
        for n in range(lines)
    )
    kids = b" ".join(b"%d 0 R" % (6 + n) for n in range(pages))
    page = (
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 3 0 R"
        b"/Resources 5 0 R>>"
    )
    return build_pdf(
        [
            b"<</Type/Catalog/Pages 2 0 R>>",
            b"<</Type/Pages/Kids[%s]/Count %d>>" % (kids, pages),
            _stream(content),
            b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
            b"<</Font<</F1 4 0 R>>>>",
            *[page] * pages,
        ]
    )


def docx_zip_bomb(inflated_bytes: int) -> bytes:
    """A DOCX-shaped zip whose body inflates to `inflated_bytes` of zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
            'package/2006/content-types"/>',
        )
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(inflated_bytes // len(block)):
                member.write(block)
    return buffer.getvalue()


def corpus_bytes(relative: str) -> bytes:
    """A corpus file's bytes; the test is skipped when ../shared/corpus is absent."""
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip("../shared/corpus is not present")
    return path.read_bytes()


def first_half(relative: str) -> bytes:
    data = corpus_bytes(relative)
    return data[: len(data) // 2]


def text_pages_pdf(pages: list[str], *, slow_page: int | None = None) -> bytes:
    """One page per text (ASCII), in Helvetica; `slow_page` (0-based) repeats its
    text 200,000 times, to keep whoever parses that page busy for many seconds."""
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"",  # the page tree, once the page numbers are known
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
    ]
    kids = []
    for index, text in enumerate(pages):
        show = b"BT /F1 12 Tf 72 700 Td (%s) Tj ET\n" % text.encode("ascii")
        content = show * (200_000 if index == slow_page else 1)
        objects.append(_stream(content))
        objects.append(
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents %d 0 R"
            b"/Resources<</Font<</F1 3 0 R>>>>>>" % len(objects)
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<</Type/Pages/Kids[%s]/Count %d>>" % (b" ".join(kids), len(kids))
    return build_pdf(objects)


_RUN_BLOCK = 1 << 20


def _deflated_run(prefix: bytes, run_bytes: int, byte: bytes = b" ") -> bytes:
    """A raw deflate stream of `prefix` then `run_bytes` of `byte`, made in
    milliseconds: a 1 MiB block deflated after a full flush (which resets the
    compressor) is the same bytes every time, so it is deflated once and repeated."""
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = head.compress(prefix) + head.flush(zlib.Z_FULL_FLUSH)
    one = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = one.compress(byte * _RUN_BLOCK) + one.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(run_bytes, _RUN_BLOCK)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    return stream + block * whole + tail.compress(byte * rest) + tail.flush()


def lying_package(package: bytes, member: str, inflated_bytes: int) -> bytes:
    """`package` (a real DOCX, XLSX or PPTX) whose `member` inflates to itself
    followed by `inflated_bytes` of spaces (still well-formed XML), while its zip
    directory and local header declare the member's original size and CRC.

    The compressed size is true (about 1 KiB per MiB inflated) and the declared one
    small, so the directory's size and ratio checks pass; a reader that believes
    the declared size and stops there even finds the right CRC.
    """
    with zipfile.ZipFile(io.BytesIO(package)) as original:
        members = [(info, original.read(info)) for info in original.infolist()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, content in members:
            if info.filename == member:
                # Stored first, the deflate stream as its bytes; patched below.
                stored = zipfile.ZipInfo(member, date_time=info.date_time)
                archive.writestr(stored, _deflated_run(content, inflated_bytes))
                declared = (len(content), zlib.crc32(content))
            else:
                archive.writestr(info, content, compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray(buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        local = archive.getinfo(member).header_offset
        central = archive.start_dir
    size, crc = declared
    # Local header: method at 8, CRC at 14, uncompressed size at 22.
    struct.pack_into("<H", data, local + 8, zipfile.ZIP_DEFLATED)
    struct.pack_into("<I", data, local + 14, crc)
    struct.pack_into("<I", data, local + 22, size)
    while data[central : central + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from(
            "<HHH", data, central + 28
        )
        name = bytes(data[central + 46 : central + 46 + name_length]).decode()
        if name == member:
            # Central directory entry: method at 10, CRC at 16, size at 24.
            struct.pack_into("<H", data, central + 10, zipfile.ZIP_DEFLATED)
            struct.pack_into("<I", data, central + 16, crc)
            struct.pack_into("<I", data, central + 24, size)
        central += 46 + name_length + extra_length + comment_length
    return bytes(data)
