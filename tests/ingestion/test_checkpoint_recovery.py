"""Issue 35 with real OS processes: a worker killed with SIGKILL at OCR page k of a
scan; the task reclaimed by another worker reads by OCR only the pages not read
yet, and ends with the chunks of an uninterrupted run."""

from __future__ import annotations

import re
import signal

import pytest

from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.factories import DocumentFactory, IngestionTaskFactory
from tests.ingestion.processes import Process, wait_until
from tests.ingestion.test_ocr_ingestion import scanned_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PAGES = 8
KILL_AT = 3  # the victim is killed once its progress shows this many pages read
TEXTS = [f"Page {n} says the rent is {n * 100} euros" for n in range(1, PAGES + 1)]


def scan_document(knowledge_base, texts=TEXTS, **traits):
    return DocumentFactory(
        knowledge_base=knowledge_base,
        filename="scan.pdf",
        content_type="application/pdf",
        content=scanned_pdf(*texts),
        **traits,
    )


def scan_task(knowledge_base) -> IngestionTask:
    return IngestionTaskFactory(document=scan_document(knowledge_base, processing=True))


def row(task) -> IngestionTask:
    return IngestionTask.objects.get(pk=task.pk)


def ocr_pages(log) -> list[int]:
    """The pages a worker's parsers read by OCR, in order, from their log."""
    if not log.exists():
        return []
    return [
        int(re.search(r"Page (\d+)", line).group(1))
        for line in log.read_text().splitlines()
    ]


def chunks_of(document_id) -> list[tuple]:
    return [
        (c.ordinal, c.text, c.page, c.ocr_confidence, bytes(c.embedding))
        for c in Chunk.objects.filter(document_id=document_id).order_by("ordinal")
    ]


def test_a_worker_killed_at_ocr_page_k_is_resumed_from_there(
    knowledge_base, process_env, parser_writable_dir, run_worker
):
    task = scan_task(knowledge_base)
    env = {
        **process_env,
        "DJANGO_SETTINGS_MODULE": "tests.counting_ocr_settings",
        "INGESTION_LEASE_SECONDS": "2",
        # One parser reads the pages in order; every page's progress is written.
        "INGESTION_PARSE_PROCESSES": "1",
        "INGESTION_PROGRESS_INTERVAL_SECONDS": "0",
    }
    logs = {name: parser_writable_dir / f"{name}.log" for name in ("victim", "rescuer")}
    victim = Process(
        env,
        "run_ingestion_worker",
        str(task.pk),
        "--worker-id",
        "victim",
        CURATOR_TEST_OCR_LOG=str(logs["victim"]),
    )
    rescuer = None
    try:
        wait_until(
            lambda: row(task).stage == "parse" and row(task).completed >= KILL_AT,
            timeout=60,
        )
        victim.popen.kill()
        victim.popen.wait()
        killed_at_page = row(task).completed
        rescuer = Process(
            env,
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            "0.5",
            "--worker-id",
            "rescuer",
            CURATOR_TEST_OCR_LOG=str(logs["rescuer"]),
        )
        wait_until(lambda: row(task).status == "succeeded", timeout=60)
    finally:
        victim.kill_if_running()
        if rescuer is not None:
            rescuer.signal(signal.SIGTERM)
            assert rescuer.stop() == 0, rescuer.stderr

    done = row(task)
    assert (done.worker_id, done.attempt) == ("rescuer", 2)
    read_before = ocr_pages(logs["victim"])
    read_again = ocr_pages(logs["rescuer"])
    assert set(range(1, killed_at_page + 1)) <= set(read_before)
    # No page before k - 1 is read again (here: none before k + 1, since a page is
    # kept before its progress is written), and the rest exactly once.
    assert read_again, "the victim read every page before it was killed"
    assert min(read_again) >= killed_at_page - 1
    assert read_again == list(range(min(read_again), PAGES + 1))

    # An uninterrupted run, in this process (two parsers sharing the pages).
    reference = scan_task(knowledge_base)
    run_worker(reference.pk)
    assert row(reference).status == "succeeded"
    assert chunks_of(task.document_id) == chunks_of(reference.document_id) != []
    assert "Page 1 says" in chunks_of(task.document_id)[0][1]


def test_a_task_failing_in_indexing_is_retried_without_parsing_again(
    knowledge_base, process_env, tmp_path
):
    task = scan_task(knowledge_base)
    log = tmp_path / "parses.log"
    worker = Process(
        process_env,
        "run_ingestion_worker",
        "--loop",
        "--poll-interval",
        "0.2",
        "--worker-id",
        "retrying",
        DJANGO_SETTINGS_MODULE="tests.failing_index_settings",
        CURATOR_TEST_PARSE_LOG=str(log),
        INGESTION_BACKOFF_BASE_SECONDS="0.2",
    )
    try:
        worker.wait_for_line(f"retry task={task.pk} worker=retrying")
        wait_until(lambda: row(task).status == "succeeded", timeout=60)
    finally:
        worker.signal(signal.SIGTERM)
        assert worker.stop() == 0, worker.stderr

    done = row(task)
    assert done.attempt == 2
    assert log.read_text().splitlines() == ["pdf"]
    assert "Page 8 says" in chunks_of(task.document_id)[-1][1]


LIGHT_WITHIN = 8.0  # seconds from submission to success, two scans running (CI)
# Long enough to outlast three small files on a fast host too: 8 pages each were
# read before the third small file was done (0.3 s a page here).
LONG_SCAN = [f"Page {n} says the rent is {n * 100} euros" for n in range(1, 25)]


def test_with_one_worker_small_files_pass_long_scans(
    knowledge_base, process_env, editor, member
):
    """The issue's check scaled down (three 30-page scans and 20 Markdown files
    within 15 s each, 20 s turns: bench/turns.py): two 24-page scans, then three
    Markdown files from someone else, 1 s turns."""
    from ingestion import services

    writer = member("editor", username="wendy")
    scans = [
        services.document_submit(user=editor, document_id=document.pk)
        for document in [scan_document(knowledge_base, LONG_SCAN) for _ in range(2)]
    ]
    worker = Process(
        process_env,
        "run_ingestion_worker",
        "--loop",
        "--poll-interval",
        "0.2",
        "--worker-id",
        "turns",
        INGESTION_TURN_SECONDS="1",
        INGESTION_PARSE_PROCESSES="1",
    )
    waits = []
    try:
        wait_until(lambda: row(scans[0]).completed >= 1, timeout=60)
        for _ in range(3):
            document = DocumentFactory(
                knowledge_base=knowledge_base, content=b"# Note\n\nShort.\n"
            )
            task = services.document_submit(user=writer, document_id=document.pk)
            wait_until(lambda: row(task).status == "succeeded", timeout=30)  # noqa: B023
            done = row(task)
            waits.append((done.finished_at - done.created_at).total_seconds())
        assert row(scans[0]).status != "succeeded" or row(scans[1]).status != (
            "succeeded"
        ), "the scans were over before the small files came"
        wait_until(
            lambda: all(row(scan).status == "succeeded" for scan in scans),
            timeout=90,
        )
    finally:
        worker.signal(signal.SIGTERM)
        assert worker.stop() == 0, worker.stderr

    assert max(waits) <= LIGHT_WITHIN, waits
    assert any(line.startswith("yielded task=") for line in worker.lines)
    assert {row(scan).attempt for scan in scans} == {1}
