"""Files saved with a password fail as PasswordProtected; files that open without
one (an owner password alone, permissions) are read as usual."""

from __future__ import annotations

import pytest

from ingestion.blocks import ParseError, ParseLimits, PasswordProtected
from ingestion.formats import ooxml, parse_document
from ingestion.formats.pdf import pdf_page_count
from tests.edge_samples import encrypted_ooxml, legacy_ole, text_pdf
from tests.ingestion.formats.common import CORPUS, texts
from tests.samples import docx_bytes

ALGORITHMS = ["RC4-40", "RC4-128", "AES-128", "AES-256"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_pdf_with_a_user_password_is_password_protected(algorithm: str) -> None:
    data = text_pdf(user_password="Secret-123", algorithm=algorithm)

    with pytest.raises(PasswordProtected, match="password-protected PDF"):
        parse_document("pdf", data)
    with pytest.raises(PasswordProtected):
        pdf_page_count(data)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_pdf_with_an_owner_password_only_is_read(algorithm: str) -> None:
    data = text_pdf(user_password="", algorithm=algorithm)

    assert texts(parse_document("pdf", data)) == ["Annual leave is 25 days."]
    assert pdf_page_count(data) == 1


def test_a_pdf_encrypted_by_an_unknown_handler_is_password_protected() -> None:
    # A certificate (public-key) handler, say: no password we could try opens it.
    data = text_pdf(user_password="", algorithm="RC4-128")
    assert data.count(b"/Standard") == 1
    data = data.replace(b"/Standard", b"/Adobe.PK")

    with pytest.raises(PasswordProtected, match="encryption cannot be opened"):
        parse_document("pdf", data)


@pytest.mark.parametrize(
    "relative",
    [
        "pdfminer.six/encryption/rc4-40.pdf",
        "pdfminer.six/encryption/rc4-128.pdf",
        "pdfminer.six/encryption/aes-128.pdf",
        "pdfminer.six/encryption/aes-128-m.pdf",
        "pdfminer.six/encryption/aes-256.pdf",
        "pdfminer.six/encryption/aes-256-m.pdf",
        "pdfminer.six/encryption/aes-256-r6.pdf",
        "unstructured/password.pdf",
    ],
)
def test_corpus_pdfs_with_a_user_password(relative: str) -> None:
    path = CORPUS / "pdf" / relative
    if not path.is_file():
        pytest.skip(f"corpus file pdf/{relative} is not present")
    with pytest.raises(PasswordProtected) as caught:
        parse_document("pdf", path.read_bytes())
    assert caught.value.reason == "password-protected PDF"


def test_an_encrypted_docx_is_password_protected() -> None:
    data = encrypted_ooxml(docx_bytes())
    assert data.startswith(b"\xd0\xcf\x11\xe0")

    with pytest.raises(PasswordProtected, match="the DOCX is protected by a password"):
        parse_document("docx", data)


def test_the_encrypted_corpus_workbook_is_password_protected() -> None:
    path = CORPUS / "xlsx" / "msoffcrypto-tool" / "example_password.xlsx"
    if not path.is_file():
        pytest.skip("../shared/corpus is not present")
    # Every OOXML parser checks the archive first, XLSX and PPTX as DOCX does.
    with pytest.raises(PasswordProtected, match="the XLSX is protected"):
        ooxml.check_archive(path.read_bytes(), ParseLimits(), label="XLSX")
    with pytest.raises(PasswordProtected):
        ooxml.transitional_package(path.read_bytes(), label="XLSX")


def test_a_legacy_office_file_named_docx_is_a_plain_parse_error() -> None:
    data = legacy_ole(docx_bytes())

    with pytest.raises(ParseError) as caught:
        parse_document("docx", data)
    assert not isinstance(caught.value, PasswordProtected)
    assert caught.value.reason == (
        "not a valid DOCX archive: a legacy Office file (save it as DOCX)"
    )


def test_a_damaged_ole_container_is_a_plain_parse_error() -> None:
    data = encrypted_ooxml(docx_bytes())[:1024]

    with pytest.raises(ParseError) as caught:
        parse_document("docx", data)
    assert not isinstance(caught.value, PasswordProtected)
    assert "damaged OLE file" in caught.value.reason
