"""Every corpus file through the real worker: succeeded, or failed with a known code."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from documents.kinds import FILE_KINDS
from ingestion.models import ErrorCode, IngestionTask
from tests.factories import DocumentFactory
from tests.ingestion.conftest import CORPUS

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FOLDERS = ["pdf", "docx", "pptx", "xlsx", "html", "markdown", "images"]
STABLE_CODES = set(ErrorCode.values)


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(
        path
        for folder in FOLDERS
        for path in (CORPUS / folder).rglob("*")
        if path.suffix.lower() in FILE_KINDS.extensions
    )


def test_whole_corpus_through_the_worker(knowledge_base):
    files = corpus_files()
    if not files:
        pytest.skip("../shared/corpus is not present")
    documents = {}
    for path in files:
        _, file_type = FILE_KINDS.for_extension(path.suffix)
        document = DocumentFactory(
            knowledge_base=knowledge_base,
            processing=True,
            filename=path.name,
            content_type=file_type.content_type,
            content=path.read_bytes(),
        )
        task = IngestionTask.objects.create(document=document)
        documents[task.pk] = path

    out = io.StringIO()
    call_command("run_ingestion_worker", "--worker-id", "corpus", stdout=out)

    outcomes = {}
    for task in IngestionTask.objects.select_related("document"):
        path = documents[task.pk].relative_to(CORPUS)
        assert task.status in ("succeeded", "failed"), (path, task.status)
        if task.status == "failed":
            assert task.error_code in STABLE_CODES, (path, task.error_code)
            assert task.document.status == "failed"
            assert "Traceback" not in (task.error_detail or "")
            assert str(CORPUS) not in (task.error_detail or ""), path
            assert "/tmp" not in (task.error_detail or ""), path
        else:
            assert task.document.status == "review_pending"
            assert task.document.chunks.exists()
        outcomes[str(path)] = task.error_code or "succeeded"

    expected = {
        "pdf/pdfminer.six/encryption/aes-256.pdf": "password_protected",
        "pdf/unstructured/password.pdf": "password_protected",
        "pdf/unstructured/copy-protected.pdf": "succeeded",
        # A scan without a text layer: read by OCR.
        "pdf/pdfminer.six/nonfree/175.pdf": "succeeded",
        "pdf/pdfminer.six/nonfree/dmca.pdf": "succeeded",
        "pdf/pdfminer.six/nonfree/i1040nr.pdf": "succeeded",
        "pptx/poi/Divino_Revelado.pptx": "parse_error",  # truncated zip
        "pptx/unstructured/sample-presentation.pptx": "succeeded",
        "xlsx/calamine/issue_530.xlsx": "succeeded",  # part names with backslashes
        "xlsx/easyexcel/t04.xlsx": "succeeded",
        "xlsx/msoffcrypto-tool/example_password.xlsx": "password_protected",
    }
    for path, outcome in expected.items():
        if path in outcomes:
            assert outcomes[path] == outcome, path
    assert sum(1 for o in outcomes.values() if o == "succeeded") > len(outcomes) // 2
