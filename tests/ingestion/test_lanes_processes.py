"""Lanes with real worker processes: a light-only worker takes the small files,
never a heavy task, and gives back a PDF it finds scanned; a heavy worker then
drains the rest."""

from __future__ import annotations

import signal

import pytest

from ingestion.models import IngestionTask
from tests.factories import DocumentFactory
from tests.ingestion.processes import Process, wait_until
from tests.ingestion.test_ocr_ingestion import png, scanned_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_light_only_worker_process_leaves_heavy_work_to_a_heavy_worker(
    knowledge_base, submit, process_env
):
    def upload(content: bytes, filename: str, content_type: str) -> IngestionTask:
        return submit(
            DocumentFactory(
                knowledge_base=knowledge_base,
                content=content,
                filename=filename,
                content_type=content_type,
            )
        )

    photo = upload(png("Invoice 42"), "invoice.png", "image/png")
    scan = upload(
        scanned_pdf("The lease runs for five years"), "scan.pdf", "application/pdf"
    )
    notes = [
        upload(f"# Note {n}\n\nRent is {n}.\n".encode(), f"n{n}.md", "text/markdown")
        for n in range(3)
    ]

    def row(task) -> IngestionTask:
        return IngestionTask.objects.get(pk=task.pk)

    light = Process(
        process_env,
        "run_ingestion_worker",
        "--loop",
        "--lanes",
        "light",
        "--poll-interval",
        "0.2",
        "--worker-id",
        "light",
    )
    try:
        light.wait_for_line("started worker=light")
        wait_until(lambda: all(row(n).status == "succeeded" for n in notes), 60)
        wait_until(lambda: row(scan).lane == "heavy" and row(scan).status == "queued")
        light.wait_for_line(f"rerouted task={scan.pk}")
    finally:
        light.signal(signal.SIGTERM)
        assert light.stop() == 0, light.stderr
    assert (row(photo).status, row(photo).attempt) == ("queued", 0)
    assert (row(scan).attempt, row(scan).work_ocr_pages) == (0, 0)
    assert "claimed task=" + str(photo.pk) not in light.stdout

    heavy = Process(process_env, "run_ingestion_worker", "--lanes", "heavy")
    assert heavy.stop(timeout=120) == 0, heavy.stderr

    assert {row(task).status for task in (photo, scan)} == {"succeeded"}
    assert row(scan).attempt == 1
    assert row(scan).worker_id != "light"
