"""Uploaded through the API and run by the real worker: files saved with a
password fail with a code the admin explains; text in legacy encodings and Strict
Open XML documents become chunks."""

from __future__ import annotations

import pytest

from documents.models import Document
from ingestion.errors import error_help
from ingestion.models import ErrorCode, IngestionTask
from retrieval.models import Chunk
from tests.edge_samples import encrypted_ooxml, strict_ooxml, text_pdf
from tests.samples import docx_bytes, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def ingest(editor, client_for, run_worker):
    """Upload `content` as `name`, submit it and run the worker on its task."""

    def run(name: str, content: bytes) -> IngestionTask:
        client = client_for(editor)
        response = client.post(
            "/api/documents",
            {"file": upload(name, content), "knowledge_base_id": "kb-company"},
            format="multipart",
        )
        assert response.status_code == 201, response.json()
        document_id = response.json()["document_id"]
        response = client.post(f"/api/documents/{document_id}/submit")
        assert response.status_code == 202, response.json()
        task_id = response.json()["task_id"]
        run_worker(task_id)
        return IngestionTask.objects.get(pk=task_id)

    return run


def chunk_text(task: IngestionTask) -> str:
    return " ".join(
        Chunk.objects.filter(document_id=task.document_id).values_list(
            "text", flat=True
        )
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("leave.pdf", text_pdf(user_password="Secret-123")),
        ("leave.docx", encrypted_ooxml(docx_bytes())),
    ],
    ids=["pdf", "docx"],
)
def test_a_file_saved_with_a_password_fails_as_password_protected(
    ingest, client, reviewer, name, content
):
    task = ingest(name, content)

    assert (task.status, task.error_code) == ("failed", "password_protected")
    assert Document.objects.get(pk=task.document_id).status == "failed"
    assert not Chunk.objects.filter(document_id=task.document_id).exists()

    client.force_login(reviewer)
    help_ = error_help(ErrorCode.PASSWORD_PROTECTED)
    for page in (
        "/admin/ingestion/ingestiontask/",
        f"/admin/documents/document/{task.document_id}/change/",
    ):
        response = client.get(page)
        assert response.status_code == 200
        assert b"<code>password_protected</code>" in response.content, page
        assert help_.sentence.encode() in response.content, page
        assert help_.next_step.encode() in response.content, page


def test_a_pdf_with_an_owner_password_only_is_ingested(ingest):
    task = ingest("leave.pdf", text_pdf(user_password=""))

    assert task.status == "succeeded", task.error_detail
    assert "Annual leave is 25 days." in chunk_text(task)


def test_a_strict_open_xml_docx_is_ingested(ingest):
    task = ingest("leave.docx", strict_ooxml(docx_bytes()))

    assert task.status == "succeeded", task.error_detail
    assert "Every employee receives 25 days of annual leave." in chunk_text(task)


GB = "年假为二十五天，病假需要医生证明。"
BIG5 = "每位員工享有二十五天年假，須提前兩週申請。"
SJIS = "年次有給休暇は二十五日です。申請は二週間前までに。"
EUC_KR = "연차 휴가는 이십오 일입니다. 미리 신청하세요."
CP1252 = "Les employés ont droit à vingt-cinq jours de congé – merci."


@pytest.mark.parametrize(
    ("name", "text", "encoding", "expected"),
    [
        ("leave.txt", f"{GB}\n\n", "gb18030", GB),
        ("leave.md", f"# 年假\n\n{BIG5}\n\n", "big5", BIG5),
        ("leave.txt", f"{SJIS}\n\n", "shift_jis", SJIS),
        ("leave.html", f"<p>{EUC_KR}</p>\n", "euc_kr", EUC_KR),
        ("leave.txt", f"{CP1252}\n\n", "cp1252", CP1252),
        ("leave.txt", f"Annual leave.\n\n{GB}\n\n", "utf-16-le", GB),
    ],
)
def test_text_in_an_undeclared_encoding_is_ingested(
    ingest, name, text, encoding, expected
):
    task = ingest(name, (text * 30).encode(encoding))

    assert task.status == "succeeded", task.error_detail
    assert expected in chunk_text(task)
