"""Bounded parsing: hostile and broken files end with the right error code, fast,
and the worker that met them carries on."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from documents.models import Document
from ingestion import sandbox as sandbox_module
from ingestion.blocks import FileTooLarge, ParseError, ParseLimits, TooManyPages
from ingestion.chunking import chunk_blocks
from ingestion.formats import parse_document
from ingestion.formats.ooxml import check_archive
from ingestion.formats.pdf import pdf_page_count
from ingestion.models import IngestionTask
from ingestion.sandbox import ParserProcessError, ParseSandbox, ParseTimeout
from retrieval.embeddings import HashingEmbedder
from tests.factories import DocumentFactory
from tests.ingestion.broken_embedders import (
    RaisingEmbedder,
    SlowEmbedder,
    UnreadableEmbedder,
)
from tests.ingestion.conftest import CORPUS
from tests.ingestion.hostile import (
    blank_pages_pdf,
    corpus_bytes,
    docx_zip_bomb,
    first_half,
    shared_stream_pdf,
    slow_pdf,
    text_pages_pdf,
)
from tests.samples import MINIMAL_PDF, docx_bytes

pytestmark = pytest.mark.django_db

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HANDBOOK = "docx/unstructured/handbook-872p.docx"


@pytest.fixture
def ingest(knowledge_base, submit, run_worker):
    """Run one file through the real worker; return the finished task row."""

    def run(content: bytes, filename: str, content_type: str) -> IngestionTask:
        document = DocumentFactory(
            knowledge_base=knowledge_base,
            content=content,
            filename=filename,
            content_type=content_type,
        )
        task = submit(document)
        run_worker(task.pk)
        return IngestionTask.objects.get(pk=task.pk)

    return run


def assert_failed(task: IngestionTask, code: str) -> None:
    assert (task.status, task.error_code, task.attempt) == ("failed", code, 1)
    assert Document.objects.get(pk=task.document_id).status == "failed"
    assert "Traceback" not in task.error_detail
    assert str(CORPUS) not in task.error_detail


def test_a_truncated_pdf_is_a_parse_error(ingest):
    task = ingest(first_half("pdf/pdfminer.six/nonfree/i1040nr.pdf"), "cut.pdf", PDF)
    assert_failed(task, "parse_error")


def test_a_failed_task_shows_the_stage_it_failed_in(ingest):
    # Progress is written at most twice a second; a failure still writes its own.
    task = ingest(text_pages_pdf(SEVEN_PAGES)[:300], "cut.pdf", PDF)
    assert_failed(task, "parse_error")
    assert (task.stage, task.completed, task.total) == ("parse", 0, 1)
    assert set(task.stage_seconds) == {"download"}


def test_a_truncated_docx_is_a_parse_error(ingest):
    task = ingest(first_half(HANDBOOK), "cut.docx", DOCX)
    assert_failed(task, "parse_error")
    assert task.error_detail == "not a valid DOCX archive"


def test_a_docx_zip_bomb_is_refused_before_it_is_inflated(ingest):
    bomb = docx_zip_bomb(64 * 1024 * 1024)
    assert len(bomb) < 200_000

    started = time.monotonic()
    task = ingest(bomb, "bomb.docx", DOCX)

    assert time.monotonic() - started < 5
    assert_failed(task, "file_too_large")
    assert "zip bomb" in task.error_detail


def test_a_docx_beyond_the_uncompressed_limit_is_too_large(ingest, settings):
    settings.INGESTION_MAX_DOCX_UNCOMPRESSED_BYTES = 1024 * 1024
    task = ingest(corpus_bytes(HANDBOOK), "handbook.docx", DOCX)
    assert_failed(task, "file_too_large")
    assert "1 MiB limit" in task.error_detail


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (ParseLimits(max_docx_compression_ratio=None), None),
        (
            ParseLimits(
                max_docx_uncompressed_bytes=4 * 1024 * 1024,
                max_docx_compression_ratio=None,
            ),
            "8 MiB uncompressed, more than the 4 MiB limit",
        ),
        (ParseLimits(), "compressed more than 100 to 1"),
    ],
    ids=["within-limits", "size", "ratio"],
)
def test_docx_limits_come_from_the_zip_directory(limits, message):
    bomb = docx_zip_bomb(8 * 1024 * 1024)
    if message is None:
        check_archive(bomb, limits, label="DOCX")
        return
    with pytest.raises(FileTooLarge, match=message):
        check_archive(bomb, limits, label="DOCX")


def test_a_pdf_with_thousands_of_blank_pages_has_too_many_pages(ingest, settings):
    settings.INGESTION_MAX_PDF_PAGES = 2000
    task = ingest(blank_pages_pdf(5000), "blank.pdf", PDF)
    assert_failed(task, "too_many_pages")
    assert "2000 pages" in task.error_detail


def test_under_the_page_limit_the_same_pdf_is_read(ingest, settings):
    settings.INGESTION_MAX_PDF_PAGES = 6000
    task = ingest(blank_pages_pdf(5000), "blank.pdf", PDF)
    assert_failed(task, "empty_document")


def test_a_small_pdf_whose_pages_share_one_stream_is_refused_in_a_moment(ingest):
    # 29 KB: its 200 pages show one stream of 1,000 lines (a minute to read them).
    started = time.monotonic()
    task = ingest(shared_stream_pdf(200, 1000), "shared.pdf", PDF)

    assert_failed(task, "too_many_chunks")
    assert time.monotonic() - started < 5
    assert task.work_cpu_seconds < 5


def test_page_counting_stops_at_the_limit():
    assert pdf_page_count(blank_pages_pdf(300)) == 300
    assert pdf_page_count(blank_pages_pdf(300), stop_after=11) == 11
    with pytest.raises(TooManyPages):
        parse_document("pdf", blank_pages_pdf(30), ParseLimits(max_pdf_pages=29))


def test_a_pathological_pdf_times_out_and_the_worker_carries_on(
    ingest, settings, knowledge_base
):
    settings.INGESTION_PARSE_TIMEOUT_SECONDS = 1
    started = time.monotonic()
    task = ingest(slow_pdf(300_000), "slow.pdf", PDF)

    assert time.monotonic() - started < 6
    assert_failed(task, "parse_timeout")
    assert task.error_detail == "parsing took longer than 1 s, the limit"
    after = ingest(MINIMAL_PDF, "fine.pdf", PDF)
    assert after.status == "succeeded"


def test_a_parse_beyond_the_memory_limit_is_too_large_and_the_worker_carries_on(
    ingest, settings
):
    # A parser starts with about 320 MiB of address space mapped (the parsing
    # libraries it imports): the limit leaves a small note room and the big text,
    # split into some five million words, none.
    big_text = ("word " * (24 * 1024 * 1024 // 5)).encode()
    settings.INGESTION_PARSE_MEMORY_BYTES = 512 * 1024 * 1024

    task = ingest(big_text, "big.txt", "text/plain")

    assert_failed(task, "file_too_large")
    assert "512 MiB memory limit" in task.error_detail
    after = ingest(b"# Fine\n\nA small note.\n", "fine.md", "text/markdown")
    assert after.status == "succeeded"


@pytest.mark.parametrize(
    ("content", "filename", "content_type", "detail"),
    [
        (docx_bytes(), "policy.pdf", PDF, "not a PDF file"),
        (MINIMAL_PDF, "policy.docx", DOCX, "not a valid DOCX archive"),
    ],
    ids=["docx-named-pdf", "pdf-named-docx"],
)
def test_a_file_whose_extension_lies_is_a_parse_error(
    ingest, content, filename, content_type, detail
):
    # Upload sniffing refuses these (next test); a stored original can still lie.
    task = ingest(content, filename, content_type)
    assert_failed(task, "parse_error")
    assert task.error_detail == detail


@pytest.mark.parametrize(
    ("content", "filename"),
    [(docx_bytes(), "policy.pdf"), (MINIMAL_PDF, "policy.docx")],
    ids=["docx-named-pdf", "pdf-named-docx"],
)
def test_the_api_refuses_an_upload_whose_extension_lies(
    editor, client_for, knowledge_base, content, filename
):
    from tests.samples import upload

    response = client_for(editor).post(
        "/api/documents",
        {"knowledge_base_id": knowledge_base.pk, "file": upload(filename, content)},
        format="multipart",
    )
    assert response.status_code == 415
    assert response.json()["error_code"] == "unsupported_media_type"
    assert not Document.objects.exists()


# --- PDF pages shared among parser processes ---------------------------------------

SEVEN_PAGES = [f"Page {n} says policy number {n}." for n in range(1, 8)]


def test_a_shard_reads_every_nth_page():
    data = text_pages_pdf(SEVEN_PAGES)

    shard = parse_document("pdf", data, shard=(1, 3))

    assert [(b.page, b.text) for b in shard] == [
        (2, SEVEN_PAGES[1]),
        (5, SEVEN_PAGES[4]),
    ]


@pytest.fixture
def sandbox():
    """A sandbox of its own, stopped after the test."""
    own = ParseSandbox()
    yield own
    own.stop()


def parse_in(sandbox, data, *, kind="pdf", processes=2, timeout=30, **options):
    return sandbox.parse(
        kind,
        data,
        limits=options.pop("limits", ParseLimits()),
        timeout=timeout,
        memory_bytes=None,
        processes=processes,
        **options,
    )


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_pdf_pages_parsed_by_several_processes_come_back_in_order(sandbox, processes):
    data = text_pages_pdf(SEVEN_PAGES)

    blocks = parse_in(sandbox, data, processes=processes)
    # Other kinds are not split: one parser reads them whole.
    text = parse_in(sandbox, b"One line.\n\nAnother.", kind="text", processes=processes)

    assert blocks == parse_document("pdf", data)
    assert [(b.page, b.text) for b in blocks] == list(enumerate(SEVEN_PAGES, 1))
    assert [b.text for b in text] == ["One line.", "Another."]


@pytest.mark.parametrize("processes", [1, 3])
def test_the_pages_read_are_heard_while_parsing(sandbox, processes):
    heard = []

    parse_in(
        sandbox,
        text_pages_pdf(SEVEN_PAGES),
        processes=processes,
        progress=lambda done, total: heard.append((done, total)),
    )

    assert heard, "no progress was reported"
    assert heard[-1] == (7, 7)
    assert all(total == 7 for _, total in heard)
    assert [done for done, _ in heard] == sorted(done for done, _ in heard)


def extract_in(sandbox, data, *, kind, processes=2, embedder=None):
    return sandbox.extract(
        kind,
        data,
        limits=ParseLimits(),
        timeout=30,
        memory_bytes=None,
        processes=processes,
        embedder=embedder,
    )


def test_a_docx_split_between_parsers_gives_the_chunks_and_vectors_of_one(
    sandbox, monkeypatch
):
    monkeypatch.setattr(sandbox_module, "HEADING_SHARD_MIN_BYTES", 0)
    paragraphs = [
        f"Rule {n}. " + "Keep the receipt of every trip. " * 40 for n in range(30)
    ]
    data = docx_bytes(paragraphs, headings_every=5)
    embedder = HashingEmbedder(64)

    split = extract_in(sandbox, data, kind="docx", processes=2, embedder=embedder)
    alone = extract_in(sandbox, data, kind="docx", processes=1, embedder=embedder)
    unembedded = extract_in(sandbox, data, kind="docx", processes=2)

    expected = chunk_blocks(parse_document("docx", data))
    assert len(expected) > 6
    assert parse_document("docx", data, shard=(1, 2))  # the second parser has work
    assert split.chunks == alone.chunks == unembedded.chunks == expected
    assert np.array_equal(split.vectors, alone.vectors)
    assert np.array_equal(
        split.vectors, embedder.embed([chunk.text for chunk in expected])
    )
    assert unembedded.vectors is None


def test_parsers_embed_a_batch_at_a_time_and_say_how_far_they_are(sandbox, monkeypatch):
    monkeypatch.setattr(sandbox_module, "HEADING_SHARD_MIN_BYTES", 0)
    data = docx_bytes(
        [f"Rule {n}. " + "Keep the receipt of every trip. " * 40 for n in range(12)],
        headings_every=3,
    )
    heard = []

    # Each batch outlasts the parsers' reporting interval, so each is heard.
    extracted = sandbox.extract(
        "docx",
        data,
        limits=ParseLimits(),
        timeout=30,
        memory_bytes=None,
        processes=2,
        embedder=SlowEmbedder(0.15),
        embed_batch=2,
        embedded=lambda done, total: heard.append((done, total)),
    )

    chunks = len(extracted.chunks)
    assert chunks >= 8
    assert extracted.vectors.shape == (chunks, 8)
    assert heard[0][0] == 0
    assert heard[-1] == (chunks, chunks)
    dones = [done for done, _ in heard]
    assert dones == sorted(dones)
    assert {done % 2 for done, total in heard if done < total} == {0}
    assert len(heard) >= chunks // 2


def test_a_parser_that_embeds_is_held_to_a_limit_per_batch_not_the_parse_limit(
    sandbox,
):
    data = "\n\n".join(
        f"Rule {n}. " + "Keep the receipt of every trip. " * 60 for n in range(4)
    ).encode()

    def extract(*, seconds_per_batch, embed_timeout):
        return sandbox.extract(
            "text",
            data,
            limits=ParseLimits(),
            timeout=1,
            memory_bytes=None,
            embedder=SlowEmbedder(seconds_per_batch),
            embed_batch=1,
            embed_timeout=embed_timeout,
        )

    started = time.monotonic()
    extracted = extract(seconds_per_batch=0.4, embed_timeout=5)
    assert len(extracted.chunks) >= 4
    assert time.monotonic() - started > 1  # past the parse limit, batch by batch

    with pytest.raises(ParseTimeout, match="embedding a batch of chunks took longer"):
        extract(seconds_per_batch=2, embed_timeout=0.5)


@pytest.mark.parametrize(
    "embedder", [RaisingEmbedder(), UnreadableEmbedder()], ids=["embed", "unpickle"]
)
def test_a_failure_of_ours_in_a_parser_is_not_blamed_on_the_file(sandbox, embedder):
    data = docx_bytes()

    with pytest.raises(ParserProcessError, match="Error in the parser process"):
        extract_in(sandbox, data, kind="docx", embedder=embedder)

    pids = [parser.process.pid for parser in sandbox._parsers]
    assert extract_in(sandbox, data, kind="docx").chunks
    assert [parser.process.pid for parser in sandbox._parsers] == pids


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs /proc")
def test_parsers_start_without_blas_threads_in_their_capped_address_space(sandbox):
    sandbox.start(memory_bytes=None, processes=1)

    pid = sandbox._parsers[0].process.pid
    with open(f"/proc/{pid}/environ", "rb") as environ:
        variables = environ.read().split(b"\0")

    # 1 unless the operator chose otherwise before the worker started.
    expected = os.environ["OPENBLAS_NUM_THREADS"].encode()
    assert b"OPENBLAS_NUM_THREADS=" + expected in variables


def test_pdf_pages_are_gathered_and_chunked_in_the_worker(sandbox):
    data = text_pages_pdf(SEVEN_PAGES)

    extracted = extract_in(sandbox, data, kind="pdf", embedder=HashingEmbedder(64))

    assert extracted.chunks == chunk_blocks(parse_document("pdf", data))
    assert extracted.vectors is None  # embedded by the worker, with progress


def test_a_shard_past_the_time_limit_stops_every_parser_and_the_next_parse_works(
    sandbox,
):
    with pytest.raises(ParseTimeout):
        parse_in(sandbox, text_pages_pdf(SEVEN_PAGES[:3], slow_page=1), timeout=1)
    blocks = parse_in(sandbox, text_pages_pdf(SEVEN_PAGES))

    assert [b.page for b in blocks] == [1, 2, 3, 4, 5, 6, 7]


def test_an_interrupted_sharded_parse_stops_the_busy_parser_only(sandbox):
    calls = []

    def interrupt():
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        parse_in(
            sandbox,
            text_pages_pdf(SEVEN_PAGES[:2], slow_page=0),
            timeout=60,
            interrupt=interrupt,
        )
    busy, idle = sandbox._parsers
    assert busy.process is None  # killed with the page it was reading
    assert idle.process is not None
    assert idle.process.is_alive()  # still warm
    blocks = parse_in(sandbox, text_pages_pdf(SEVEN_PAGES[:2]))
    assert [b.page for b in blocks] == [1, 2]


def test_a_damaged_pdf_read_by_two_parsers_is_one_parse_error(sandbox):
    with pytest.raises(ParseError, match=r"damaged PDF|not a PDF"):
        parse_in(sandbox, text_pages_pdf(SEVEN_PAGES)[:300])


def test_a_parser_that_died_while_idle_is_replaced_before_the_next_parse(sandbox):
    sandbox.start(memory_bytes=None, processes=2)
    first = sandbox._parsers[0].process
    first.kill()  # the OOM killer, say, between two documents
    first.join(timeout=5)

    blocks = parse_in(sandbox, text_pages_pdf(SEVEN_PAGES))

    assert [b.page for b in blocks] == [1, 2, 3, 4, 5, 6, 7]


def test_an_error_every_shard_meets_leaves_the_parsers_warm(sandbox):
    sandbox.start(memory_bytes=None, processes=2)
    pids = [parser.process.pid for parser in sandbox._parsers]

    with pytest.raises(TooManyPages):
        parse_in(sandbox, blank_pages_pdf(30), limits=ParseLimits(max_pdf_pages=29))

    assert [parser.process.pid for parser in sandbox._parsers] == pids
    assert all(parser.process.is_alive() for parser in sandbox._parsers)


@pytest.mark.parametrize("processes", [1, 2])
def test_a_parse_stopped_after_its_page_leaves_its_parsers_ready(sandbox, processes):
    """StopAfterPage (a task's turn over) winds the parse down instead of killing
    the parsers: the same processes answer the next parse, a STOP that came
    after a parser's reply is ignored, and the answer is whole."""
    from ingestion.sandbox import StopAfterPage

    data = text_pages_pdf(SEVEN_PAGES)
    parse_in(sandbox, data, processes=processes)
    pids = [slot.process.pid for slot in sandbox._parsers]

    def stop(done, total):
        raise StopAfterPage

    with pytest.raises(StopAfterPage):
        parse_in(sandbox, data, processes=processes, progress=stop)

    assert [slot.process.pid for slot in sandbox._parsers] == pids
    assert parse_in(sandbox, data, processes=processes) == parse_document("pdf", data)
    assert [slot.process.pid for slot in sandbox._parsers] == pids
