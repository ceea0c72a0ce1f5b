"""Small files that used to hold a worker for minutes (issue 36, point 3; answered
by issue 35's lanes, budgets and turns), through a real worker beside a small
Markdown file: a PDF of 30 image-only pages (302 s of one worker before), and a
28 KB PDF whose 200 pages share one content stream (`too_many_chunks` after
66-124 s before)."""

from __future__ import annotations

import signal

import pytest

from ingestion import services
from ingestion.models import IngestionTask
from tests.factories import DocumentFactory
from tests.ingestion.hostile import shared_stream_pdf
from tests.ingestion.processes import Process, wait_until
from tests.ingestion.test_turns_processes import scanned_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_scan_and_a_shared_stream_pdf_do_not_hold_up_a_small_file(
    knowledge_base, editor, process_env
):
    def upload(content: bytes, name: str, content_type: str) -> IngestionTask:
        document = DocumentFactory(
            knowledge_base=knowledge_base,
            filename=name,
            content_type=content_type,
            content=content,
        )
        return services.document_submit(user=editor, document_id=document.pk)

    def row(task) -> IngestionTask:
        return IngestionTask.objects.get(pk=task.pk)

    scan = upload(scanned_pdf(0), "scan.pdf", "application/pdf")
    multiplied = shared_stream_pdf(200, 1000)
    assert len(multiplied) < 32 * 1024
    shared = upload(multiplied, "shared.pdf", "application/pdf")
    worker = Process(
        process_env, "run_ingestion_worker", "--loop", "--poll-interval", "0.2"
    )
    try:
        wait_until(lambda: row(scan).completed >= 1, 120)
        note = upload(
            b"# Note\n\nThe deposit is two months.\n", "n.md", "text/markdown"
        )
        wait_until(lambda: row(note).status == "succeeded", 60)
        wait_until(lambda: row(shared).status == "failed", 60)
        scan_then = row(scan)
        wait_until(lambda: row(scan).status == "succeeded", 600)
    finally:
        worker.signal(signal.SIGTERM)
        assert worker.stop() == 0, worker.stderr

    note, shared = row(note), row(shared)
    assert (note.finished_at - note.created_at).total_seconds() <= 15
    assert shared.error_code == "too_many_chunks"
    assert (shared.finished_at - shared.started_at).total_seconds() < 10
    assert scan_then.status != "succeeded"  # both went first, mid-scan
