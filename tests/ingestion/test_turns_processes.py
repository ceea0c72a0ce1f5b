"""Turns with a real worker process (issue 35): one worker, three 30-page scans
submitted first, then 20 small Markdown files. Each small file is done within
15 s of its submission while the scans go on, and the scans still finish, every
page read by OCR once."""

from __future__ import annotations

import io
import signal

import pytest
from PIL import Image, ImageDraw, ImageFont

from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.factories import DocumentFactory
from tests.ingestion.processes import Process, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SCANS, PAGES, NOTES = 3, 30, 20


def scanned_pdf(scan: int) -> bytes:
    """PAGES image-only pages of three printed lines each (about half a second
    of OCR a page on one core)."""
    font = ImageFont.load_default(size=40)
    pages = []
    for page in range(1, PAGES + 1):
        image = Image.new("L", (1400, 420), 255)
        draw = ImageDraw.Draw(image)
        for line in range(3):
            draw.text(
                (60, 60 + line * 110),
                f"Scan {scan} page {page} line {line}: rent is due monthly",
                font=font,
                fill=0,
            )
        pages.append(image)
    data = io.BytesIO()
    pages[0].save(
        data, format="PDF", resolution=200, save_all=True, append_images=pages[1:]
    )
    return data.getvalue()


def test_small_files_are_done_within_seconds_while_long_scans_go_on(
    knowledge_base, submit, process_env
):
    def row(task) -> IngestionTask:
        return IngestionTask.objects.get(pk=task.pk)

    scans = [
        submit(
            DocumentFactory(
                knowledge_base=knowledge_base,
                filename=f"scan-{n}.pdf",
                content_type="application/pdf",
                content=scanned_pdf(n),
            )
        )
        for n in range(SCANS)
    ]
    worker = Process(
        process_env, "run_ingestion_worker", "--loop", "--poll-interval", "0.2"
    )
    try:
        wait_until(lambda: row(scans[0]).completed >= 1, 120)
        notes = [
            submit(
                DocumentFactory(
                    knowledge_base=knowledge_base,
                    filename=f"note-{n}.md",
                    content_type="text/markdown",
                    content=f"# Note {n}\n\nThe deposit is {n} months.\n".encode(),
                )
            )
            for n in range(NOTES)
        ]
        wait_until(lambda: all(row(n).status == "succeeded" for n in notes), 120)
        scans_done = sum(row(s).status == "succeeded" for s in scans)
        waits = sorted(
            (row(n).finished_at - row(n).created_at).total_seconds() for n in notes
        )
        wait_until(lambda: all(row(s).status == "succeeded" for s in scans), 600)
    finally:
        worker.signal(signal.SIGTERM)
        assert worker.stop() == 0, worker.stderr

    assert waits[-1] <= 15, waits
    assert scans_done < SCANS  # the scans went on meanwhile
    assert row(scans[0]).yields >= 1
    for scan in scans:
        assert Chunk.objects.filter(document_id=scan.document_id).exists()
        # Every OCR page charged once: none read twice across the turns.
        assert row(scan).work_ocr_pages == PAGES
