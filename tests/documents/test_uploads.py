"""`documents/uploads.py`: what an upload is, from its name and its bytes (no database).

Uploads through the API, with a file of every supported type and the files that lie
about theirs, are tested in `test_api_upload.py`.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from documents.kinds import FILE_KINDS
from documents.uploads import (
    UnsupportedMediaType,
    detect_kind,
    is_blank,
    safe_filename,
)
from tests.samples import MINIMAL_PDF


def kind_of(name: str, content: bytes) -> str:
    kind, _ = detect_kind(name, SimpleUploadedFile(name, content))
    return kind.name


class TestSafeFilename:
    @pytest.mark.parametrize(
        ("raw", "safe"),
        [
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\dana\\Leave policy.pdf", "Leave policy.pdf"),
            ("  notes.md  ", "notes.md"),
            ("bad\x00na\nme\u202e.md", "badname.md"),
            ("", "upload"),
            ("folder/", "folder"),
            ("/", "upload"),
        ],
    )
    def test_the_last_component_without_controls(self, raw, safe):
        assert safe_filename(raw) == safe

    def test_a_long_name_keeps_its_end(self):
        name = "x" * 300 + ".pdf"

        assert safe_filename(name) == ("x" * 251) + ".pdf"


class TestDetectKind:
    @pytest.mark.parametrize(
        ("name", "extension", "content_type"),
        [
            ("REPORT.PDF", ".pdf", "application/pdf"),
            ("page.htm", ".html", "text/html"),
            ("notes.markdown", ".md", "text/markdown"),
        ],
    )
    def test_one_kind_whatever_the_extension_is_spelled(
        self, name, extension, content_type
    ):
        content = MINIMAL_PDF if extension == ".pdf" else b"<p>Leave</p>\n"

        _, file_type = detect_kind(name, SimpleUploadedFile(name, content))

        assert (file_type.extension, file_type.content_type) == (
            extension,
            content_type,
        )

    def test_the_file_is_read_from_its_start_again_afterwards(self):
        uploaded = SimpleUploadedFile("policy.pdf", MINIMAL_PDF)
        uploaded.read(10)

        detect_kind("policy.pdf", uploaded)

        assert uploaded.read() == MINIMAL_PDF

    def test_an_unknown_extension_names_what_is_supported(self):
        with pytest.raises(UnsupportedMediaType, match=r"'\.odt'.*upload PDF, DOCX"):
            kind_of("notes.odt", b"PK\x03\x04")
        with pytest.raises(UnsupportedMediaType, match="'none'"):
            kind_of("README", b"plain text")

    def test_a_name_that_lies_about_the_content_is_refused(self):
        with pytest.raises(UnsupportedMediaType, match=r"named \.pdf .* not pdf"):
            kind_of("policy.pdf", b"Annual leave is 25 days.")

    def test_a_damaged_package_is_left_for_the_parser_to_report(self):
        # The zip signature, then garbage: named docx, it is a (broken) docx.
        assert kind_of("policy.docx", b"PK\x03\x04" + b"\x00" * 64) == "docx"

    @pytest.mark.parametrize(
        "content",
        [
            "Annual leave is 25 days.\n".encode("utf-16"),
            ("年假为二十五天。\n" * 10).encode("utf-16-le"),
            b"Tab\tand form feed\x0c are text.\n",
        ],
    )
    def test_text_in_any_of_its_encodings_is_text(self, content):
        assert kind_of("notes.txt", content) == "text"

    @pytest.mark.parametrize(
        "content", [MINIMAL_PDF, b"\x7fELF\x02\x01\x01", bytes(range(256)) * 4]
    )
    def test_binary_content_is_not_text(self, content):
        with pytest.raises(UnsupportedMediaType):
            kind_of("notes.txt", content)


class TestIsBlank:
    @pytest.mark.parametrize(
        ("name", "content", "blank"),
        [
            ("notes.md", b"", True),
            ("notes.md", b" \t\r\n\x0b\x0c", True),
            ("notes.md", b"\xef\xbb\xbf\n", True),
            ("notes.txt", " \n ".encode("utf-16"), True),
            ("notes.txt", b"\n\n.\n", False),
            ("page.html", b"   <p></p>", False),
            ("scan.pdf", b" " * 10, False),  # not text: the parser decides
        ],
    )
    def test_only_whitespace_in_a_text_is_blank(self, name, content, blank):
        uploaded = SimpleUploadedFile(name, content)
        kind, _ = FILE_KINDS.for_extension("." + name.rsplit(".", 1)[1])

        assert is_blank(uploaded, kind) is blank
        assert uploaded.read() == content
