from __future__ import annotations

import hashlib
import io
import uuid
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from PIL import Image

from documents.models import Document, Role
from tests.factories import KnowledgeBaseFactory
from tests.samples import MINIMAL_PDF, SAMPLES, docx_bytes, upload

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

pytestmark = pytest.mark.django_db

CONTENT_TYPES = {
    "policy.pdf": "application/pdf",
    "policy.docx": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    ),
    "policy.md": "text/markdown",
    "policy.html": "text/html",
    "policy.txt": "text/plain",
    "slides.pptx": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    ),
    "sheet.xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "scan.png": "image/png",
    "scan.jpg": "image/jpeg",
    "scan.tiff": "image/tiff",
}


def zipped(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, "<x/>")
    return buffer.getvalue()


def image_bytes(image_format: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (8, 8), 255).save(buffer, format=image_format)
    return buffer.getvalue()


OTHER_SUPPORTED = {
    "slides.pptx": zipped("[Content_Types].xml", "ppt/presentation.xml"),
    "sheet.xlsx": zipped("[Content_Types].xml", "xl/workbook.xml"),
    "scan.png": image_bytes("PNG"),
    "scan.jpg": image_bytes("JPEG"),
    "scan.tiff": image_bytes("TIFF"),
}


def post(client, name, content, kb="kb-company", **fields):
    return client.post(
        "/api/documents",
        {"file": upload(name, content), "knowledge_base_id": kb, **fields},
        format="multipart",
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [*SAMPLES.items(), ("policy.docx", docx_bytes()), *OTHER_SUPPORTED.items()],
)
def test_editor_uploads_each_supported_type(editor, client_for, name, content):
    response = post(client_for(editor), name, content)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "draft"
    assert body["filename"] == name
    assert body["content_type"] == CONTENT_TYPES[name]
    assert body["size_bytes"] == len(content)
    assert body["sha256"] == hashlib.sha256(content).hexdigest()
    assert body["version"] == 1
    assert body["lock_version"] == 0
    assert body["created_by"] == "eddie"
    assert body["knowledge_base_id"] == "kb-company"
    document = Document.objects.get(pk=body["document_id"])
    with default_storage.open(document.storage_key) as stored:
        assert stored.read() == content


def test_file_name_cannot_steer_the_storage_key(editor, client_for):
    response = post(client_for(editor), "../../../etc/passwd.md", b"# hi\n\ntext\n")

    assert response.status_code == 201
    document = Document.objects.get(pk=response.json()["document_id"])
    assert document.filename == "passwd.md"
    assert document.storage_key == (f"originals/kb-company/{document.pk}.md")
    assert ".." not in document.storage_key


def test_unknown_knowledge_base_is_not_found(editor, client_for):
    response = post(client_for(editor), "a.md", b"text", kb="kb-nope")
    assert response.status_code == 404
    assert response.json()["error_code"] == "not_found"


def test_invisible_knowledge_base_is_not_found(
    editor, client_for, other_knowledge_base
):
    response = post(client_for(editor), "a.md", b"text", kb="kb-other")
    assert response.status_code == 404
    assert not Document.objects.exists()


def test_viewer_cannot_upload(viewer, client_for):
    response = post(client_for(viewer), "a.md", b"text")
    assert response.status_code == 403
    assert response.json()["error_code"] == "permission_denied"
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("program.exe", b"MZ\x90\x00binary"),
        ("notes.odt", b"PK\x03\x04whatever"),
        ("noextension", b"plain text"),
        ("fake.pdf", b"just some text, not a PDF"),
        ("fake.docx", b"just some text"),
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
        ("real-pdf.txt", MINIMAL_PDF),
        ("binary.txt", bytes(range(256)) * 4),
        ("old-word.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)),
        ("photo.png", image_bytes("JPEG")),
        ("slides.pptx", zipped("word/document.xml")),
        ("sheet.xlsx", zipped("ppt/presentation.xml")),
    ],
)
def test_unsupported_or_lying_files_are_refused(editor, client_for, name, content):
    response = post(client_for(editor), name, content)

    assert response.status_code == 415
    assert response.json()["error_code"] == "unsupported_media_type"
    assert not Document.objects.exists()


def test_zip_that_is_not_a_word_document_is_refused(editor, client_for, tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
    response = post(client_for(editor), "sheet.docx", buffer.getvalue())
    assert response.status_code == 415


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.md", b""),
        ("empty.pdf", b""),
        ("blank.txt", b"   \n\t\r\n  "),
        ("blank-utf16.txt", "  \n ".encode("utf-16")),
        ("bom-only.md", b"\xef\xbb\xbf\n"),
    ],
)
def test_empty_or_whitespace_only_files_are_refused(editor, client_for, name, content):
    response = post(client_for(editor), name, content)

    assert response.status_code == 422
    assert response.json()["error_code"] == "empty_document"
    assert not Document.objects.exists()


def test_file_over_the_limit_is_refused(editor, client_for, settings):
    settings.MAX_UPLOAD_BYTES = 100
    response = post(client_for(editor), "big.md", b"x" * 101)

    assert response.status_code == 413
    assert response.json()["error_code"] == "file_too_large"
    assert not Document.objects.exists()


def test_missing_fields_are_validation_errors(editor, client_for):
    response = client_for(editor).post("/api/documents", {}, format="multipart")
    assert response.status_code == 422
    assert response.json()["error_code"] == "validation_error"
    assert set(response.json()["fields"]) == {"file", "knowledge_base_id"}


def test_new_version_joins_the_family(editor, client_for):
    client = client_for(editor)
    first = post(client, "handbook.md", b"# v1\n\ntext\n").json()
    second = post(
        client,
        "handbook.md",
        b"# v2\n\nnew text\n",
        document_family_id=first["family_id"],
    ).json()

    assert second["family_id"] == first["family_id"]
    assert second["version"] == 2


def test_explicit_duplicate_version_conflicts(editor, client_for):
    client = client_for(editor)
    first = post(client, "handbook.md", b"# v1\n\ntext\n").json()
    response = post(
        client,
        "handbook.md",
        b"# again\n\ntext\n",
        document_family_id=first["family_id"],
        version=1,
    )
    assert response.status_code == 409
    assert response.json()["error_code"] == "version_conflict"


def test_family_of_another_knowledge_base_is_refused(member, client_for):
    from tests.factories import DocumentFactory, KnowledgeBaseFactory

    elsewhere = DocumentFactory(knowledge_base=KnowledgeBaseFactory(id="kb-x"))
    user = member(Role.EDITOR)
    response = post(
        client_for(user), "a.md", b"text", document_family_id=str(elsewhere.family_id)
    )
    assert response.status_code == 422


def test_unknown_family_is_refused(editor, client_for):
    response = post(
        client_for(editor), "a.md", b"text", document_family_id=str(uuid.uuid4())
    )
    assert response.status_code == 422
    assert response.json()["error_code"] == "validation_error"


@pytest.mark.parametrize(
    ("name", "text", "encoding"),
    [
        ("notes.txt", "Annual leave is 25 days.\n" * 20, "utf-16-le"),
        ("notes.txt", "Annual leave is 25 days.\n" * 20, "utf-16-be"),
        ("notes.md", "# 年假\n\n每位员工享有二十五天年假。\n" * 20, "utf-16-le"),
        ("notes.html", "<p>年假为二十五天。</p>\n" * 20, "utf-16-be"),
        ("notes.txt", "Annual leave is 25 days.\n" * 20, "utf-32-le"),
    ],
)
def test_wide_text_without_a_byte_order_mark_is_text(
    editor, client_for, name, text, encoding
):
    response = post(client_for(editor), name, text.encode(encoding))

    assert response.status_code == 201, response.json()


def test_a_password_protected_office_file_is_accepted_as_what_it_is(editor, client_for):
    # An encrypted OOXML file is an OLE container; the worker reports it as
    # password_protected, which tells the editor what to do.
    encrypted = CORPUS / "xlsx" / "msoffcrypto-tool" / "example_password.xlsx"
    if not encrypted.is_file():
        pytest.skip("../shared/corpus is not present")

    response = post(client_for(editor), "budget.xlsx", encrypted.read_bytes())

    assert response.status_code == 201, response.json()
    assert response.json()["content_type"] == CONTENT_TYPES["sheet.xlsx"]


def post_to(client, query_kb, name="a.md", content=b"# hi\n\ntext\n", **fields):
    return client.post(
        f"/api/documents?knowledge_base_id={query_kb}",
        {"file": upload(name, content), **fields},
        format="multipart",
    )


def test_the_knowledge_base_may_be_named_in_the_query_string(editor, client_for):
    response = post_to(client_for(editor), "kb-company")

    assert response.status_code == 201, response.json()
    assert response.json()["knowledge_base_id"] == "kb-company"


def test_query_string_and_form_must_agree(editor, client_for, member):
    member(Role.EDITOR, kb=KnowledgeBaseFactory(id="kb-two"), username="eddie")
    client = client_for(editor)

    same = post_to(client, "kb-company", knowledge_base_id="kb-company")
    different = post_to(client, "kb-two", knowledge_base_id="kb-company")

    assert same.status_code == 201
    assert different.status_code == 422
    assert "knowledge_base_id" in different.json()["fields"]
    assert Document.objects.count() == 1


def test_a_viewer_naming_the_knowledge_base_is_refused(viewer, client_for):
    response = post_to(client_for(viewer), "kb-company")
    assert response.status_code == 403
    assert response.json()["error_code"] == "permission_denied"


def test_an_editor_elsewhere_is_refused_by_the_form_field(
    member, client_for, other_knowledge_base
):
    # Editor somewhere passes the check before the body; the form's knowledge
    # base is checked after it.
    user = member(Role.VIEWER)
    member(Role.EDITOR, kb=other_knowledge_base, username=user.username)

    response = post(client_for(user), "a.md", b"text")

    assert response.status_code == 403
    assert not Document.objects.exists()


def test_listing_documents_needs_no_editor_role(viewer, client_for):
    assert client_for(viewer).get("/api/documents").status_code == 200
