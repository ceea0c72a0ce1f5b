"""What one document may produce is capped: its text (`text_too_large`) and its
chunks (`too_many_chunks`), checked in the parser processes as they go and on the
whole in the worker, before anything is embedded there or written.

A small file can produce a great deal: 48 KB of Markdown headings make 12,000
chunks, a 10 KB PDF of compressed content streams hundreds. Each test runs a real
worker process over a queue that ends with an ordinary file, which must succeed.
"""

from __future__ import annotations

import random

import pytest

from documents.models import Document
from ingestion import services
from ingestion.blocks import Block, ParseLimits, TooManyBlocks, TooManyChunks
from ingestion.chunking import chunk_blocks
from ingestion.errors import describe
from ingestion.formats import parse_document
from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.factories import DocumentFactory
from tests.ingestion.hostile import text_pages_pdf
from tests.ingestion.processes import Process
from tests.samples import docx_bytes
from tests.security.hostile_text import MIB, html_table_flood, short_lines

HEADINGS = ("# a\n" * 12_000).encode()  # each empty section keeps its heading
FINE = b"# Leave\n\nEvery employee receives 25 days of annual leave.\n"


def test_chunking_stops_at_the_first_chunk_past_the_cap():
    blocks = [Block(text=f"Paragraph {n}.", heading_path=(f"H{n}",)) for n in range(50)]
    assert len(chunk_blocks(blocks, max_chunks=50)) == 50
    with pytest.raises(TooManyChunks, match="more than 49 chunks"):
        chunk_blocks(blocks, max_chunks=49)


@pytest.mark.parametrize(
    ("kind", "passage"),
    [
        ("text", b"Leave.\n\n"),
        ("markdown", b"Leave.\n\n"),
        ("html", b"<p>Leave.</p>"),
    ],
)
def test_text_formats_stop_at_the_first_passage_past_the_cap(kind, passage):
    assert len(parse_document(kind, passage * 100, ParseLimits(max_blocks=100))) == 100
    with pytest.raises(TooManyBlocks, match="more than 99 passages"):
        parse_document(kind, passage * 100, ParseLimits(max_blocks=99))


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_file_of_a_passage_every_few_bytes_fails_at_the_passage_cap(
    knowledge_base, editor, process_env
):
    """5 MB files of short lines and table rows, over the default cap of 200,000."""
    lines_md = _submit(editor, knowledge_base, short_lines(5 * MIB), "lines.md")
    lines_txt = _submit(editor, knowledge_base, short_lines(5 * MIB), "lines.txt")
    rows = _submit(editor, knowledge_base, html_table_flood(5 * MIB), "rows.html")
    fine = _submit(editor, knowledge_base, FINE, "fine.md")

    _drain_queue(process_env)

    for task in (lines_md, lines_txt, rows):
        _assert_failed_for_good(task, "too_many_chunks", "200,000 passages")
    assert IngestionTask.objects.get(pk=fine).status == "succeeded"


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_text_and_chunk_caps_fail_the_task_for_good_and_the_queue_goes_on(
    knowledge_base, editor, reviewer, process_env, client_for
):
    """Default chunk cap; a text cap lowered so that a 150 KB text file passes it."""
    headings = _submit(editor, knowledge_base, HEADINGS, "headings.md")
    big_text = _submit(editor, knowledge_base, b"plain words " * 12_500, "big.txt")
    fine = _submit(editor, knowledge_base, FINE, "fine.md")

    _drain_queue(process_env, INGESTION_MAX_TEXT_CHARS="100000")

    _assert_failed_for_good(headings, "too_many_chunks", "more than 10,000 chunks")
    _assert_failed_for_good(big_text, "text_too_large", "100,000 characters")
    assert IngestionTask.objects.get(pk=fine).status == "succeeded"

    # Shown like every other failure: the task in the API, its help in the admin.
    task = client_for(editor).get(f"/api/ingestion-tasks/{headings}").json()
    assert (task["status"], task["error_code"]) == ("failed", "too_many_chunks")
    assert "INGESTION_MAX_CHUNKS_PER_DOCUMENT" in describe("too_many_chunks")
    reviewer.is_superuser = True
    reviewer.save()
    client = client_for(reviewer)
    client.force_login(reviewer)
    page = client.get(f"/admin/ingestion/ingestiontask/{headings}/change/")
    assert page.status_code == 200
    assert "more passages than one document may have" in page.content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_cap_holds_for_a_pdf_chunked_in_the_worker_and_a_docx_split_in_two(
    knowledge_base, editor, process_env
):
    """PDF pages are chunked in the worker; a large DOCX is chunked by two parsers,
    each with fewer chunks than the cap (150 of its 300): the whole is over it."""
    pdf = _submit(
        editor, knowledge_base, text_pages_pdf(["word " * 3000] * 30), "w.pdf"
    )
    docx = _submit(editor, knowledge_base, _two_shard_docx(), "long.docx")
    fine = _submit(editor, knowledge_base, FINE, "fine.md")

    _drain_queue(
        process_env,
        INGESTION_MAX_CHUNKS_PER_DOCUMENT="225",
        INGESTION_PARSE_PROCESSES="2",
    )

    _assert_failed_for_good(pdf, "too_many_chunks", "more than 225 chunks")
    _assert_failed_for_good(docx, "too_many_chunks", "more than 225 chunks")
    assert IngestionTask.objects.get(pk=fine).status == "succeeded"


def _two_shard_docx() -> bytes:
    """About 320 KB (two parsers share a DOCX from 256 KB), 300 chunks, a heading
    every ten paragraphs of random words (so that it does not compress away)."""
    rng = random.Random(17)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [
        "".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
        for _ in range(5000)
    ]
    paragraphs = [
        " ".join(rng.choice(words) for _ in range(60)) + "." for _ in range(1500)
    ]
    return docx_bytes(paragraphs, headings_every=10)


def _submit(editor, knowledge_base, content: bytes, filename: str):
    content_types = {
        "md": "text/markdown",
        "txt": "text/plain",
        "html": "text/html",
        "pdf": "application/pdf",
        "docx": "application/vnd.openxmlformats-officedocument."
        "wordprocessingml.document",
    }
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=content,
        filename=filename,
        content_type=content_types[filename.rsplit(".", 1)[1]],
    )
    return services.document_submit(user=editor, document_id=document.pk).pk


def _drain_queue(process_env, **settings: str) -> None:
    worker = Process(
        process_env, "run_ingestion_worker", "--worker-id", "caps", **settings
    )
    assert worker.stop(timeout=180) == 0, worker.stderr


def _assert_failed_for_good(task_id, code: str, detail: str) -> None:
    """Failed at the first run (no retry), no chunk row, the document failed."""
    task = IngestionTask.objects.get(pk=task_id)
    assert (task.status, task.error_code, task.attempt) == ("failed", code, 1), (
        task.error_detail
    )
    assert detail in task.error_detail
    assert Document.objects.get(pk=task.document_id).status == "failed"
    assert not Chunk.objects.filter(document_id=task.document_id).exists()
