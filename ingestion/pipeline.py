"""One execution of the ingestion pipeline: download, parse, embed, index, finalize.

The pipeline reports progress through `ingestion.claims`, whose writes are all
guarded by the claim; when one of them finds the task gone it raises `TaskLost`
and the pipeline stops without touching anything else. Before each report, and
while it waits for the parser, it calls `interrupt()`, through which the worker
stops it early (lease lost, shutdown grace over); after each page read, once a
page read by OCR has been kept (`checkpoints.py`), it also calls `turn_over()`,
which raises when the task should yield its worker to others: every turn keeps
at least one new page, so a task that yields always finishes. Parsing runs in
the worker's parser processes (`sandbox.py`), bounded in time, memory, pages,
DOCX size and the text and chunks one document may produce; so do chunking and,
when the embedder is `portable` (the local ones), embedding, a batch at a time
with its progress reported, except for PDFs, whose pages the worker gathers
before chunking and embedding them. Every run meters its work against the
document's budget (`budget.py`), charged with its progress.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError

from documents.kinds import FILE_KINDS
from documents.models import Document
from retrieval.embeddings import get_embedder
from retrieval.meaning import get_meaning
from retrieval.services import chunk_rows

from . import claims
from .artifacts import artifacts_discard
from .blocks import (
    FileTooLarge,
    OcrTimeout,
    OcrUnavailable,
    ParseError,
    ParseLimits,
    PasswordProtected,
    TextTooLarge,
    TooManyChunks,
    TooManyPages,
    check_chunk_count,
    check_text_length,
)
from .budget import WorkBudgetExceeded, WorkLimits, WorkMeter
from .checkpoints import Checkpoints
from .claims import TaskClaim, TaskLost
from .embedding import EmbeddingUnavailable, embed_chunks, embed_sentences
from .lanes import ALL_LANES, heavy_reason
from .models import ErrorCode, TaskLane, TaskStage
from .parsers import (
    configure_parsers,
    parse_limits,
    parse_memory_bytes,
    parse_timeout_seconds,
)
from .sandbox import Extracted, ParseSandbox, ParseTimeout, shared_sandbox

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[str, int, int], None]


class HeavyTask(Exception):
    """The run found the task heavy, and this worker takes no heavy work."""


class IngestionFailure(Exception):
    """A failure with a stable error code and a short, path-free detail."""

    def __init__(self, error_code: str, detail: str) -> None:
        super().__init__(detail)
        self.error_code = error_code
        self.detail = detail


# Most specific first: the subclasses of ParseError carry their own code.
PARSE_ERROR_CODES: tuple[tuple[type[ParseError], str], ...] = (
    (ParseTimeout, ErrorCode.PARSE_TIMEOUT),
    (OcrTimeout, ErrorCode.PARSE_TIMEOUT),
    (TooManyPages, ErrorCode.TOO_MANY_PAGES),
    (TextTooLarge, ErrorCode.TEXT_TOO_LARGE),
    (TooManyChunks, ErrorCode.TOO_MANY_CHUNKS),
    (FileTooLarge, ErrorCode.FILE_TOO_LARGE),
    (PasswordProtected, ErrorCode.PASSWORD_PROTECTED),
    (OcrUnavailable, ErrorCode.OCR_UNAVAILABLE),
    (ParseError, ErrorCode.PARSE_ERROR),
)


class IngestionPipeline:
    def __init__(
        self,
        claim: TaskClaim,
        on_progress: ProgressCallback | None = None,
        *,
        interrupt: Callable[[], None] = lambda: None,
        turn_over: Callable[..., None] = lambda lane, **found: None,
        sandbox: ParseSandbox | None = None,
        lanes: frozenset[str] = ALL_LANES,
    ):
        self.claim = claim
        self.lanes = lanes
        self.lane = claim.lane
        self.on_progress = on_progress or (lambda stage, done, total: None)
        self.interrupt = interrupt
        self.turn_over = turn_over
        self.sandbox = sandbox or shared_sandbox()
        configure_parsers()
        self.embedder = get_embedder()
        self.meaning = get_meaning()
        self.batch_size = settings.INGESTION_EMBED_BATCH
        self.progress_interval = settings.INGESTION_PROGRESS_INTERVAL_SECONDS
        # The claim wrote "download 0/1": the first report need not.
        self._last_progress_write = time.monotonic()
        self._pending_progress: tuple[str, int, int] | None = None
        self._shown_progress: tuple[str, int, int] = (TaskStage.DOWNLOAD, 0, 1)
        self.work: WorkMeter | None = None
        self._pages = 1  # what the parse stage counts: pages when it hears of them
        self._pages_kept = 0  # pages read by OCR in this run and kept
        self._stage: str | None = None
        self._stage_started = 0.0
        self._stage_seconds: dict[str, float] = {}

    def run(self) -> int:
        """Run every stage; return the number of chunks written."""
        self.work = WorkMeter(
            before=claims.ingestion_task_work_spent(self.claim),
            limits=WorkLimits.from_settings(),
            parser_cpu=self.sandbox.cpu_seconds,
        )
        try:
            try:
                self.work.check()  # spent by earlier runs: stop before starting
                return self._run_stages()
            except WorkBudgetExceeded as error:
                raise IngestionFailure(
                    ErrorCode.WORK_BUDGET_EXCEEDED, str(error)
                ) from error
        except TaskLost:
            raise
        except Exception:
            # The failed task shows the stage it failed in, not an older one.
            with contextlib.suppress(TaskLost, DatabaseError):
                self._write_progress_if_due(force=True)
            raise
        finally:
            self._charge_work()

    def _charge_work(self) -> None:
        """What this run spent and has not written yet, while the task is ours."""
        unwritten = self.work.unwritten()
        with contextlib.suppress(DatabaseError):
            if claims.ingestion_task_charge_work(self.claim, unwritten):
                self.work.written(unwritten)

    def _run_stages(self) -> int:
        self.report(TaskStage.DOWNLOAD, 0, 1)
        document = self.load_document()
        checkpoints = Checkpoints(document, parse_limits(), self.embedder)
        # An earlier attempt's parse (it failed later, or was killed) is reused.
        extracted = checkpoints.parsed() or self.download_and_parse(
            document, checkpoints
        )
        chunks = extracted.chunks
        self._parsed()

        # Made by the parser processes beside the parse, or by an earlier attempt.
        vectors = extracted.vectors
        if vectors is None:
            vectors = checkpoints.vectors(len(chunks))
        try:
            if vectors is None:
                vectors = embed_chunks(
                    self.embedder,
                    chunks,
                    batch=self.batch_size,
                    checkpoints=checkpoints,
                    report=self.report,
                    turn_over=self._turn_over,
                )
                checkpoints.save_vectors(vectors)
            else:
                self.report(TaskStage.EMBEDDING, len(chunks), len(chunks))
            embed_sentences(
                self.meaning,
                chunks,
                batch=self.batch_size,
                report=self.report,
                turn_over=self._turn_over,
            )
        except EmbeddingUnavailable as error:
            raise IngestionFailure(error.error_code, str(error)) from error

        self.report(TaskStage.INDEXING, 0, len(chunks))
        rows = chunk_rows(
            document=document,
            chunks=chunks,
            vectors=vectors,
            embedding_model=self.embedder.name,
            ingestion_task_id=self.claim.task_id,
            terms=extracted.terms,
        )
        self.report(TaskStage.INDEXING, len(chunks), len(chunks))

        # The chunks are written with the success, in one transaction.
        self.report(TaskStage.FINALIZING, len(chunks), len(chunks))
        self._charge_work()
        claims.ingestion_task_succeed(
            self.claim,
            chunks=rows,
            stage=TaskStage.FINALIZING,
            completed=len(chunks),
            total=len(chunks),
            stage_seconds=dict(self._stage_seconds),
        )
        self._stage_finished()
        checkpoints.discard()
        return len(chunks)

    def download_and_parse(
        self, document: Document, checkpoints: Checkpoints
    ) -> Extracted:
        """The download and parse stages, their output kept for a later attempt."""
        data = self.download(document)
        self.report(TaskStage.DOWNLOAD, 1, 1)
        self.report(TaskStage.PARSE, 0, 1)
        extracted = self.parse(document, data, checkpoints)
        checkpoints.save_parsed(extracted)
        if extracted.vectors is not None:
            checkpoints.save_vectors(extracted.vectors)
        return extracted

    def report(self, stage: str, completed: int, total: int) -> None:
        """Check for interruption and note progress, written when it is due.

        Every write is guarded by the claim, so a lost task surfaces here as
        `TaskLost` (or at the next guarded write, the chunks at the latest).
        """
        self.interrupt()
        self.work.check()
        if stage != self._stage:
            self._stage_finished()
            self._stage, self._stage_started = stage, time.monotonic()
        self._pending_progress = (stage, completed, total)
        self._write_progress_if_due()
        self.on_progress(stage, completed, total)

    def _write_progress_if_due(self, *, force: bool = False) -> None:
        """The latest progress, when due; a long step with none to report still
        writes the work it spent (a run killed meanwhile is charged for it)."""
        now = time.monotonic()
        if not force and now - self._last_progress_write < self.progress_interval:
            return
        work = self.work.unwritten() if self.work is not None else None
        if self._pending_progress is None and not work:
            return
        stage, completed, total = self._pending_progress or self._shown_progress
        claims.ingestion_task_report_progress(
            self.claim,
            stage=stage,
            completed=completed,
            total=total,
            stage_seconds=dict(self._stage_seconds),
            work=work,
        )
        if work:
            self.work.written(work)
        self._shown_progress = (stage, completed, total)
        self._pending_progress = None
        self._last_progress_write = now

    def _pages_read(self, done: int, total: int) -> None:
        # A PDF's parse shows its pages (a 30-page scan must show it is moving).
        found_heavy = self._cost_found(pages=total)
        self._pages = total
        self.report(TaskStage.PARSE, done, total)
        if found_heavy:
            self.turn_over(self.lane, found_heavy=True)
        if self._pages_kept:
            self._turn_over()

    def _turn_over(self) -> None:
        # The progress just noted is written as it stops.
        self.turn_over(self.lane)

    def _ocr_page_read(
        self, checkpoints: Checkpoints, number: int, blocks: list
    ) -> None:
        # Told before the page's progress: kept by then.
        if checkpoints.save_ocr_page(number, blocks):
            self._pages_kept += 1

    def _ocr_page(self) -> None:
        found_heavy = self._cost_found(ocr=True)
        self.work.ocr_page()
        if found_heavy:  # the page is read while the parsers wind down
            self.turn_over(self.lane, found_heavy=True)

    def _cost_found(self, *, pages: int | None = None, ocr: bool = False) -> bool:
        """A light task found heavy moves to that lane, and leaves a worker that
        takes no heavy work before it does any (`lanes.py`); True when it moved,
        for the caller to give light work it was claimed ahead of its place
        (`lanes.turn_is_over`)."""
        if self.lane == TaskLane.HEAVY:
            return False
        reason = heavy_reason(pages=pages, ocr=ocr)
        if reason is None:
            return False
        claims.ingestion_task_set_lane(self.claim, TaskLane.HEAVY)
        self.lane = TaskLane.HEAVY
        logger.info("task is heavy task=%s (%s)", self.claim.task_id, reason)
        if TaskLane.HEAVY not in self.lanes:
            raise HeavyTask(reason)
        return True

    def _parsed(self) -> None:
        """The parse stage complete (or found done by an earlier attempt), unless
        the parsers' first embedded batch already moved on to the next."""
        if self._stage in (TaskStage.DOWNLOAD, TaskStage.PARSE):
            self.report(TaskStage.PARSE, self._pages, self._pages)

    def _chunks_embedded(self, done: int, total: int) -> None:
        # Embedding in the parsers: a large document's vectors take a while with
        # a semantic model, and its task shows them coming.
        self._parsed()
        self.report(TaskStage.EMBEDDING, done, total)

    def _while_parsing(self) -> None:
        # Called every few tenths of a second while the parser works: a long parse
        # shows up as the current stage even though no report follows it soon,
        # and stops as soon as it has spent the document's budget.
        self.interrupt()
        self.work.check()
        self._write_progress_if_due()

    def _stage_finished(self) -> None:
        """One log line per stage: task, worker, stage, duration."""
        if self._stage is None:
            return
        seconds = time.monotonic() - self._stage_started
        self._stage_seconds[self._stage] = round(seconds, 3)
        logger.info(
            "stage finished task=%s worker=%s stage=%s seconds=%.3f",
            self.claim.task_id,
            self.claim.worker_id,
            self._stage,
            seconds,
            extra={"duration_seconds": round(seconds, 3)},
        )

    def load_document(self) -> Document:
        document = Document.objects.filter(pk=self.claim.document_id).first()
        if document is None:
            artifacts_discard(document_id=self.claim.document_id)
            raise IngestionFailure(
                ErrorCode.DOCUMENT_NOT_FOUND, "The document of this task is gone."
            )
        return document

    def download(self, document: Document) -> bytes:
        try:
            with default_storage.open(document.storage_key, "rb") as original:
                return original.read()
        except Exception as error:
            raise IngestionFailure(
                ErrorCode.OBJECT_READ_ERROR,
                f"The original could not be read from storage "
                f"({type(error).__name__}).",
            ) from error

    def parse(
        self, document: Document, data: bytes, checkpoints: Checkpoints
    ) -> Extracted:
        """Chunks, and their vectors when the embedder can run in the parsers.

        The parsers refuse more text or chunks than one document may produce as
        they go; the whole, joined from several parsers' shares, is checked here.
        Pages an earlier attempt read by OCR are not read again; each page read
        by OCR now is kept as it comes.
        """
        limits = parse_limits()
        kind = FILE_KINDS.for_content_type(document.content_type).name
        try:
            extracted = self.sandbox.extract(
                kind,
                data,
                limits=limits,
                timeout=parse_timeout_seconds(kind, len(data)),
                memory_bytes=parse_memory_bytes(),
                interrupt=self._while_parsing,
                processes=settings.INGESTION_PARSE_PROCESSES,
                embedder=self.embedder
                if getattr(self.embedder, "portable", False)
                else None,
                embed_batch=self.batch_size,
                embed_timeout=settings.INGESTION_EMBED_TIMEOUT_SECONDS,
                progress=self._pages_read,
                embedded=self._chunks_embedded,
                known_ocr=checkpoints.ocr_pages(),
                ocr_read=partial(self._ocr_page_read, checkpoints),
                ocr_page=self._ocr_page,
            )
        except ParseError as error:
            raise parse_failure(error) from error
        return checked(extracted, limits)


def parse_failure(error: ParseError) -> IngestionFailure:
    """The task's failure for a parse that failed, with its stable code."""
    code = next(c for kind, c in PARSE_ERROR_CODES if isinstance(error, kind))
    return IngestionFailure(code, str(error))


def checked(extracted: Extracted, limits: ParseLimits) -> Extracted:
    """`extracted`, once its whole is within the limits of one document (the
    parsers refuse more as they go; a whole joined from several parsers' shares
    is checked here) and has text."""
    chunks = extracted.chunks
    try:
        check_chunk_count(len(chunks), limits.max_chunks)
        check_text_length(chunks[-1].char_end if chunks else 0, limits.max_text_chars)
    except ParseError as error:
        raise parse_failure(error) from error
    if not chunks:
        raise IngestionFailure(
            ErrorCode.EMPTY_DOCUMENT,
            "The file has no extractable text (for example, a scanned PDF "
            "without a text layer).",
        )
    return extracted
