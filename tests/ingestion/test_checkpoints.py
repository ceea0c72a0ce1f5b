"""Checkpointed stages (issue 35): each stage's output kept between attempts, so a
retry parses nothing again and a reclaimed scan reads by OCR only the pages not
read yet; artifacts that fail their check are computed again; cancel, success and
pruning remove them."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage

from ingestion import artifacts, pipeline, services
from ingestion.blocks import Block, ParseLimits
from ingestion.housekeeping import ingestion_history_prune
from ingestion.models import IngestionTask
from ingestion.sandbox import ParseSandbox, ReplyRejected, wire
from retrieval.models import Chunk
from tests.factories import DocumentFactory, IngestionTaskFactory
from tests.ingestion.test_ocr_ingestion import scanned_pdf

pytestmark = pytest.mark.django_db

TEXT = (
    b"# Leave\n\nEvery employee receives 25 days of annual leave.\n\n"
    b"# Travel\n\nTrain tickets are refunded within a month.\n"
)


def stored(document) -> list[str]:
    try:
        return default_storage.listdir(f"artifacts/{document.pk}")[1]
    except FileNotFoundError:
        return []


def chunk_rows_of(document) -> list[tuple]:
    return [
        (c.ordinal, c.text, c.page, c.ocr_confidence, bytes(c.embedding))
        for c in Chunk.objects.filter(document=document).order_by("ordinal")
    ]


@pytest.fixture(autouse=True)
def _own_storage(settings, tmp_path):
    """Artifacts this test alone writes (pruning lists them all)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def count_parses(monkeypatch):
    calls: list[str] = []
    extract = ParseSandbox.extract

    def counting(self, kind, *args, **kwargs):
        calls.append(kind)
        return extract(self, kind, *args, **kwargs)

    monkeypatch.setattr(ParseSandbox, "extract", counting)
    return calls


class TestArtifacts:
    def test_a_written_artifact_reads_back_under_a_versioned_name(self):
        name = artifacts.artifact_name(uuid.uuid4(), "parse", ["sha", "v"])
        artifacts.artifact_write(name, [[1, "two"], b"\x00\x01"])

        assert f"/parse-v{artifacts.FORMAT_VERSION}-" in name
        assert artifacts.artifact_read(name) == [[1, "two"], b"\x00\x01"]

    @pytest.mark.parametrize(
        "damage",
        [
            lambda data: data[: len(data) // 2],  # a kill mid-write
            lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # a flipped bit
            lambda data: b"not msgpack at all",
            lambda data: b"",
        ],
    )
    def test_a_damaged_artifact_reads_as_missing_and_is_removed(self, damage):
        name = artifacts.artifact_name(uuid.uuid4(), "parse", ["sha"])
        artifacts.artifact_write(name, ["payload", 42])
        with default_storage.open(name, "rb") as original:
            data = original.read()
        default_storage.delete(name)
        default_storage.save(name, io.BytesIO(damage(data)))

        assert artifacts.artifact_read(name) is None
        assert not default_storage.exists(name)

    def test_another_format_version_is_not_read(self, monkeypatch):
        name = artifacts.artifact_name(uuid.uuid4(), "parse", ["sha"])
        artifacts.artifact_write(name, ["payload"])
        monkeypatch.setattr(artifacts, "FORMAT_VERSION", artifacts.FORMAT_VERSION + 1)

        assert artifacts.artifact_read(name) is None


def test_a_task_failing_in_indexing_is_retried_without_parsing_again(
    knowledge_base, submit, run_worker, editor, monkeypatch, count_parses
):
    document = DocumentFactory(knowledge_base=knowledge_base, content=TEXT)
    reference = DocumentFactory(knowledge_base=knowledge_base, content=TEXT)
    rows = pipeline.chunk_rows
    failures = iter([RuntimeError("indexing broke")])

    def failing_once(**kwargs):
        for error in failures:
            raise error
        return rows(**kwargs)

    monkeypatch.setattr(pipeline, "chunk_rows", failing_once)
    task = submit(document)
    run_worker(task.pk)
    task.refresh_from_db()
    assert (task.status, task.stage) == ("failed", "indexing")
    assert stored(document)  # the parse and the vectors are kept

    services.ingestion_task_retry(user=editor, task_id=task.pk)
    run_worker(task.pk)
    task.refresh_from_db()

    assert task.status == "succeeded", task.error_detail
    assert count_parses == ["markdown"]
    run_worker(submit(reference).pk)
    assert chunk_rows_of(document) == chunk_rows_of(reference) != []
    assert stored(document) == []  # done with: the chunks hold the result


def test_a_damaged_parse_artifact_is_parsed_again(
    knowledge_base, submit, run_worker, editor, monkeypatch, count_parses
):
    document = DocumentFactory(knowledge_base=knowledge_base, content=TEXT)
    rows = pipeline.chunk_rows
    failures = iter([RuntimeError("indexing broke")])

    def failing_once(**kwargs):
        for error in failures:
            raise error
        return rows(**kwargs)

    monkeypatch.setattr(pipeline, "chunk_rows", failing_once)
    task = submit(document)
    run_worker(task.pk)
    for name in stored(document):
        path = f"artifacts/{document.pk}/{name}"
        default_storage.delete(path)
        default_storage.save(path, io.BytesIO(b"\x93\x01"))

    services.ingestion_task_retry(user=editor, task_id=task.pk)
    run_worker(task.pk)
    task.refresh_from_db()

    assert task.status == "succeeded", task.error_detail
    assert count_parses == ["markdown", "markdown"]


def test_pages_read_by_an_earlier_attempt_are_not_read_again():
    """The parser uses the pages it is given and reports only the pages it reads."""
    data = scanned_pdf("The lease runs for five years", "Rent is due monthly")
    known = {1: [Block(text="Remembered first page", page=1, ocr_confidence=0.9)]}
    read: dict[int, list[Block]] = {}
    sandbox = ParseSandbox()
    try:
        blocks = sandbox.parse(
            "pdf",
            data,
            limits=ParseLimits(ocr_page_seconds=60),
            timeout=60,
            memory_bytes=None,
            processes=2,
            known_ocr=known,
            ocr_read=lambda number, page: read.setdefault(number, page),
        )
    finally:
        sandbox.stop()

    assert [block.text for block in blocks] == [
        "Remembered first page",
        "Rent is due monthly",
    ]
    assert list(read) == [2]
    assert read[2] == blocks[1:]


def test_a_page_message_for_another_page_is_refused():
    block = Block(text="x", page=3)
    message = wire.pack(["page", 2, [block.to_wire()]])
    with pytest.raises(ReplyRejected):
        wire.decode_reply(
            message, operation="blocks", dimension=None, limits=ParseLimits()
        )
    assert wire.decode_reply(
        wire.encode_page(3, [block]),
        operation="blocks",
        dimension=None,
        limits=ParseLimits(),
    ) == wire.Reply("page", (3, [block]))


def keep_artifact(document) -> str:
    name = artifacts.artifact_name(document.pk, "parse", ["x"])
    artifacts.artifact_write(name, ["kept"])
    return name


def test_cancel_removes_the_artifacts(
    knowledge_base, editor, django_capture_on_commit_callbacks
):
    task = IngestionTaskFactory(
        document=DocumentFactory(knowledge_base=knowledge_base, processing=True)
    )
    name = keep_artifact(task.document)

    with django_capture_on_commit_callbacks(execute=True):
        services.ingestion_task_cancel(user=editor, task_id=task.pk)

    assert not default_storage.exists(name)


def test_deleting_a_document_removes_its_artifacts(
    knowledge_base, django_capture_on_commit_callbacks
):
    document = DocumentFactory(knowledge_base=knowledge_base)
    name = keep_artifact(document)

    with django_capture_on_commit_callbacks(execute=True):
        document.delete()

    assert not default_storage.exists(name)


def test_prune_removes_orphans_and_keeps_what_a_task_may_resume_from(
    knowledge_base,
):
    def document_with_task(status):
        document = DocumentFactory(knowledge_base=knowledge_base)
        IngestionTaskFactory(document=document, status=status)
        return document

    kept = [document_with_task(s) for s in ("queued", "running", "failed")]
    done = [document_with_task(s) for s in ("succeeded", "cancelled")]
    draft = DocumentFactory(knowledge_base=knowledge_base)
    gone = DocumentFactory.build(knowledge_base=knowledge_base)
    names = {d.pk: keep_artifact(d) for d in [*kept, *done, draft, gone]}

    result = ingestion_history_prune(older_than=timedelta(days=1))

    assert result.artifacts == 4
    for document in kept:
        assert default_storage.exists(names[document.pk])
    for document in [*done, draft, gone]:
        assert not default_storage.exists(names[document.pk])
        assert stored(document) == []
    assert IngestionTask.objects.count() == 5
