from __future__ import annotations

import io
import logging

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from documents.models import Document
from ingestion import claims, services
from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.ingestion.tasks import markdown_document
from tests.samples import docx_bytes

pytestmark = pytest.mark.django_db


class TestSuccess:
    def test_worker_ingests_a_document(self, knowledge_base, submit, run_worker):
        document = markdown_document(knowledge_base)
        task = submit(document)

        stats, lines = run_worker(task.pk, worker_id="w-1")

        task.refresh_from_db()
        document.refresh_from_db()
        chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
        assert stats.succeeded == 1
        assert task.status == "succeeded"
        assert task.stage == "finalizing"
        assert task.attempt == 1
        assert task.worker_id == "w-1"
        assert task.completed == task.total == len(chunks) > 1
        assert task.started_at is not None
        assert task.finished_at is not None
        assert document.status == "review_pending"
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        assert all(c.embedding for c in chunks)
        assert all(c.ingestion_task_id == task.pk for c in chunks)
        assert ["Handbook", "报销"] in [c.heading_path for c in chunks]

        assert lines[0] == f"claimed task={task.pk} worker=w-1 status=running attempt=1"
        stages = [line.split()[0] for line in lines if line.startswith("stage=")]
        assert stages[0] == "stage=download"
        assert stages.index("stage=parse") < stages.index("stage=embedding")
        assert stages[-2:] == ["stage=indexing", "stage=finalizing"]
        assert "stage=download 0/1" in lines
        assert "stage=parse 0/1" in lines
        # The local embedder runs in the parser processes, beside the parse, and
        # they say how far it is.
        assert f"stage=embedding 0/{len(chunks)}" in lines
        assert f"stage=embedding {len(chunks)}/{len(chunks)}" in lines
        assert stages.index("stage=embedding") > max(
            i for i, stage in enumerate(stages) if stage == "stage=parse"
        )
        assert f"stage=indexing {len(chunks)}/{len(chunks)}" in lines
        assert lines[-1] == f"succeeded task={task.pk} worker=w-1 chunks={len(chunks)}"

    def test_an_embedder_that_cannot_leave_the_worker_embeds_there_alike(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        from django.conf import settings

        from ingestion import pipeline
        from retrieval.embeddings import HashingEmbedder

        class WorkerOnlyEmbedder(HashingEmbedder):
            portable = False

            def __init__(self):
                super().__init__(settings.EMBEDDING_DIMENSION)

        parsed_there = submit(markdown_document(knowledge_base))
        run_worker(parsed_there.pk)
        monkeypatch.setattr(pipeline, "get_embedder", WorkerOnlyEmbedder)
        embedded_here = submit(markdown_document(knowledge_base))
        _, lines = run_worker(embedded_here.pk)

        def rows(task):
            chunks = Chunk.objects.filter(document_id=task.document_id)
            return list(chunks.order_by("ordinal").values_list("text", "embedding"))

        assert rows(embedded_here) == rows(parsed_there)
        total = len(rows(embedded_here))
        assert f"stage=embedding 0/{total}" in lines
        assert f"stage=embedding {total}/{total}" in lines

    @pytest.mark.parametrize(
        ("name", "content", "content_type"),
        [
            (
                "policy.docx",
                docx_bytes(),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ),
            (
                "policy.html",
                b"<html><head><script>var x=1;</script><style>p{}</style></head>"
                b"<body><h1>Leave</h1><p>Annual leave is 25 days.</p></body></html>",
                "text/html",
            ),
            (
                "policy.txt",
                "年假为二十五天。\n\n病假需要证明。".encode("gb18030"),
                "text/plain",
            ),
        ],
    )
    def test_each_format(
        self, knowledge_base, submit, run_worker, name, content, content_type
    ):
        document = markdown_document(
            knowledge_base, content=content, filename=name, content_type=content_type
        )
        task = submit(document)
        run_worker(task.pk)
        task.refresh_from_db()
        assert task.status == "succeeded", task.error_detail
        text = " ".join(
            Chunk.objects.filter(document=document).values_list("text", flat=True)
        )
        assert "25" in text or "二十五" in text
        assert "var x" not in text

    def test_running_a_document_twice_never_duplicates_chunks(
        self, knowledge_base, submit, run_worker, editor
    ):
        document = markdown_document(knowledge_base)
        first = submit(document)
        run_worker(first.pk)
        count = Chunk.objects.filter(document=document).count()
        Document.objects.filter(pk=document.pk).update(status="draft")

        second = submit(document)
        run_worker(second.pk)

        assert Chunk.objects.filter(document=document).count() == count
        assert set(
            Chunk.objects.filter(document=document).values_list(
                "ingestion_task_id", flat=True
            )
        ) == {second.pk}

    def test_without_task_id_the_oldest_goes_first_until_empty(
        self, knowledge_base, submit, run_worker
    ):
        tasks = [
            submit(markdown_document(knowledge_base, content=b"# A\n\nOne text.\n"))
            for _ in range(3)
        ]

        stats, lines = run_worker()

        assert stats.claimed == 3
        claimed = [line.split()[1] for line in lines if line.startswith("claimed")]
        assert claimed == [f"task={t.pk}" for t in tasks]
        assert set(IngestionTask.objects.values_list("status", flat=True)) == {
            "succeeded"
        }

    def test_max_tasks(self, knowledge_base, submit, run_worker):
        for _ in range(3):
            submit(markdown_document(knowledge_base, content=b"# A\n\nSome text.\n"))
        stats, _ = run_worker(max_tasks=2)
        assert stats.claimed == 2
        assert IngestionTask.objects.filter(status="queued").count() == 1


class TestFailures:
    def fail_with(self, submit, run_worker, document):
        task = submit(document)
        _, lines = run_worker(task.pk)
        task.refresh_from_db()
        document_status = (
            Document.objects.filter(pk=document.pk)
            .values_list("status", flat=True)
            .first()
        )
        return task, document_status, lines

    def test_damaged_pdf_is_a_parse_error(self, knowledge_base, submit, run_worker):
        document = markdown_document(
            knowledge_base,
            content=b"%PDF-1.4\n1 0 obj<<garbage>>\nnot really a pdf",
            filename="broken.pdf",
            content_type="application/pdf",
        )
        task, document_status, lines = self.fail_with(submit, run_worker, document)
        assert task.status == "failed"
        assert task.error_code == "parse_error"
        assert document_status == "failed"
        assert (
            lines[-1]
            == f"failed task={task.pk} worker=test-worker error_code=parse_error"
        )
        assert not Chunk.objects.filter(document=document).exists()

    def test_missing_original_is_an_object_read_error(
        self, knowledge_base, submit, run_worker, settings
    ):
        document = markdown_document(knowledge_base)
        default_storage.delete(document.storage_key)
        task, document_status, _ = self.fail_with(submit, run_worker, document)
        assert task.error_code == "object_read_error"
        # Transient (issue 5): retried later; the document keeps waiting.
        assert task.status == "retry_wait"
        assert document_status == "processing"
        assert str(settings.MEDIA_ROOT) not in task.error_detail
        assert "Traceback" not in task.error_detail

    def test_no_text_is_an_empty_document(self, knowledge_base, submit, run_worker):
        document = markdown_document(
            knowledge_base,
            content=b"<html><script>only()</script><style>x{}</style></html>",
            filename="empty.html",
            content_type="text/html",
        )
        task, document_status, _ = self.fail_with(submit, run_worker, document)
        assert task.error_code == "empty_document"
        assert document_status == "failed"

    def test_deleted_document_row_is_document_not_found(
        self, knowledge_base, submit, run_worker
    ):
        document = markdown_document(knowledge_base)
        task = submit(document)
        Document.objects.filter(pk=document.pk).delete()

        run_worker(task.pk)

        task.refresh_from_db()
        assert task.status == "failed"
        assert task.error_code == "document_not_found"

    def test_unexpected_error_is_internal_error_with_type_only(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        from ingestion import pipeline

        def explode(*args, **kwargs):
            raise RuntimeError("secret /srv/path and SELECT * FROM x")

        monkeypatch.setattr(pipeline.claims, "ingestion_task_succeed", explode)
        document = markdown_document(knowledge_base)
        task, document_status, _ = self.fail_with(submit, run_worker, document)
        assert task.error_code == "internal_error"
        assert task.error_detail == "Unexpected error in the worker (RuntimeError)."
        assert document_status == "failed"

    def test_error_detail_is_bounded(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        from ingestion.blocks import ParseError
        from ingestion.sandbox import ParseSandbox

        def long_error(*args, **kwargs):
            raise ParseError("x" * 5000)

        # Parsing runs in the parser process; fail at the worker's side of it.
        monkeypatch.setattr(ParseSandbox, "extract", long_error)
        task, _, _ = self.fail_with(
            submit, run_worker, markdown_document(knowledge_base)
        )
        assert task.error_code == "parse_error"
        assert len(task.error_detail) <= 500

    def test_failed_then_retried_then_failed_again(
        self, knowledge_base, submit, run_worker, editor
    ):
        document = markdown_document(
            knowledge_base,
            content=b"%PDF-1.4 broken",
            filename="broken.pdf",
            content_type="application/pdf",
        )
        task = submit(document)
        run_worker(task.pk)
        services.ingestion_task_retry(user=editor, task_id=task.pk)
        task.refresh_from_db()
        assert (task.status, task.attempt) == ("queued", 1)

        run_worker(task.pk)

        task.refresh_from_db()
        assert (task.status, task.attempt, task.error_code) == (
            "failed",
            2,
            "parse_error",
        )


class TestCancellation:
    @pytest.mark.parametrize(
        "cancel_at", ["download", "parse", "embedding", "indexing", "finalizing"]
    )
    def test_cancel_while_running_leaves_no_chunks(
        self, knowledge_base, submit, editor, cancel_at, monkeypatch
    ):
        from ingestion.pipeline import IngestionPipeline
        from ingestion.worker import Worker

        document = markdown_document(knowledge_base)
        task = submit(document)
        original = IngestionPipeline.report

        def report_then_cancel(pipeline, stage, completed, total):
            original(pipeline, stage, completed, total)
            if stage == cancel_at:
                services.ingestion_task_cancel(user=editor, task_id=task.pk)

        monkeypatch.setattr(IngestionPipeline, "report", report_then_cancel)
        lines: list[str] = []
        stats = Worker(worker_id="w", write=lines.append).run(task.pk)

        task.refresh_from_db()
        assert stats.lost == 1
        assert task.status == "cancelled"
        assert Document.objects.get(pk=document.pk).status == "draft"
        assert not Chunk.objects.filter(document=document).exists()
        assert lines[-1].startswith(f"lost task={task.pk}")


class TestClaiming:
    def test_migration_resets_tasks_released_before_the_release_reset_them(
        self, knowledge_base, submit
    ):
        from importlib import import_module

        from django.apps import apps

        migration = import_module(
            "ingestion.migrations.0003_released_tasks_start_clean"
        )
        released = submit(markdown_document(knowledge_base))
        retrying = submit(markdown_document(knowledge_base))
        IngestionTask.objects.filter(pk=released.pk).update(
            stage_seconds={"parse": 2.5}
        )
        IngestionTask.objects.filter(pk=retrying.pk).update(
            status="retry_wait", attempt=1, stage_seconds={"parse": 2.5}
        )

        migration.reset_queued_first_attempts(apps, None)

        assert IngestionTask.objects.get(pk=released.pk).stage_seconds == {}
        assert IngestionTask.objects.get(pk=retrying.pk).stage_seconds == {"parse": 2.5}

    def test_loser_prints_claim_missed(self, knowledge_base, submit, run_worker):
        task = submit(markdown_document(knowledge_base))
        claims.ingestion_task_claim(task.pk, worker_id="worker-one")

        stats, lines = run_worker(task.pk, worker_id="worker-two")

        assert lines == [f"claim missed task={task.pk} worker=worker-two"]
        assert stats.claimed == 0

    def test_an_idle_loop_worker_gets_its_parsers_running(self, settings, monkeypatch):
        from ingestion import parsers
        from ingestion.sandbox import ParseSandbox
        from ingestion.wakeups import PollWaiter
        from ingestion.worker import Worker

        class StopWhenIdle(PollWaiter):
            def wait(self, timeout, stop):
                stop.set()
                return False

        sandbox = ParseSandbox()
        monkeypatch.setattr(parsers, "shared_sandbox", lambda: sandbox)
        settings.INGESTION_PARSE_PROCESSES = 2

        def idle_once():
            Worker(
                worker_id="w", loop=True, waiter=StopWhenIdle(), write=lambda _: None
            ).run()
            return [parser.process for parser in sandbox._parsers]

        try:
            started = idle_once()
            assert [process.is_alive() for process in started] == [True, True]
            started[1].kill()
            started[1].join(timeout=5)
            restarted = idle_once()
            assert restarted[0].pid == started[0].pid
            assert restarted[1].pid != started[1].pid
            assert restarted[1].is_alive()
        finally:
            sandbox.stop()

    def test_an_idle_loop_worker_carries_on_when_its_parsers_cannot_start(
        self, monkeypatch, caplog
    ):
        from ingestion import parsers
        from ingestion.wakeups import PollWaiter
        from ingestion.worker import Worker

        class StopAfterThreeWaits(PollWaiter):
            waits = 0

            def wait(self, timeout, stop):
                self.waits += 1
                if self.waits == 3:
                    stop.set()
                return False

        class NoForks:
            def prepare(self, **options):
                pass  # the fork server is up ...

            def start(self, **options):
                # ... but cannot fork: it exits, and this is what the worker sees.
                raise EOFError("unexpected EOF")

        monkeypatch.setattr(parsers, "shared_sandbox", NoForks)
        waiter = StopAfterThreeWaits()
        with caplog.at_level("WARNING", logger="ingestion.worker"):
            stats = Worker(
                worker_id="w", loop=True, waiter=waiter, write=lambda _: None
            ).run()

        assert waiter.waits == 3
        assert stats.claimed == 0
        assert [record.getMessage() for record in caplog.records] == [
            "parser processes could not start worker=w (EOFError)"
        ]


class TestOutcomes:
    def test_outcomes_are_kept_and_logged_by_their_plain_names(
        self, knowledge_base, submit, run_worker, caplog
    ):
        done = submit(markdown_document(knowledge_base))
        empty = submit(
            markdown_document(
                knowledge_base,
                content=b"<html><script>only()</script></html>",
                filename="empty.html",
                content_type="text/html",
            )
        )

        with caplog.at_level(logging.INFO, logger="ingestion.worker"):
            stats, _ = run_worker()

        assert stats.outcomes == {str(done.pk): "succeeded", str(empty.pk): "failed"}
        finished = [r.getMessage() for r in caplog.records if "finished" in r.msg]
        assert any(
            f"task={done.pk} " in m and "outcome=succeeded " in m for m in finished
        )
        assert any(
            f"task={empty.pk} " in m and "outcome=failed " in m for m in finished
        )


class TestCommand:
    def call(self, *args):
        out = io.StringIO()
        call_command("run_ingestion_worker", *args, stdout=out)
        return out.getvalue().splitlines()

    def test_empty_queue_exits_cleanly(self):
        lines = self.call("--worker-id", "cron-1")
        assert lines == ["nothing to do worker=cron-1"]

    def test_runs_a_task_by_id(self, knowledge_base, submit):
        task = submit(markdown_document(knowledge_base))
        lines = self.call(str(task.pk), "--worker-id", "w-9")
        assert lines[0] == f"claimed task={task.pk} worker=w-9 status=running attempt=1"
        assert lines[-1].startswith(f"succeeded task={task.pk}")

    def test_unknown_task_is_a_command_error(self):
        import uuid

        with pytest.raises(CommandError, match="No ingestion task"):
            self.call(str(uuid.uuid4()))

    @pytest.mark.parametrize(
        "args", [["not-a-uuid"], ["--max-tasks", "0"], ["--poll-interval", "-1"]]
    )
    def test_bad_arguments_are_refused(self, args):
        with pytest.raises(CommandError):
            self.call(*args)
