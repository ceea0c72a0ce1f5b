"""Small documents run together: one claim's token, one heartbeat, one call of
each embedder and one finishing transaction for up to INGESTION_SMALL_BATCH
tasks, so that a document of a few hundred bytes costs about its own work.

    head claimed as any task (claims.ingestion_task_claim_candidate)
    head small? -> its companions claimed by one conditional UPDATE
                   (claims.ingestion_tasks_claim_small: same knowledge base and
                   lane, first run, Markdown or plain text, small)
    each task:  download, parse in the parser processes (one round trip; the
                parsers chunk, embed and cut its terms, as for any document)
    the batch:  sentence vectors in one `remember`, chunk vectors in one pass
                when the embedder must stay in the worker, chunk rows built
    finish:     claims.ingestion_tasks_succeed: per task its guarded `succeed`
                and its document's `ingest_succeed` in a savepoint, then one
                DELETE and one INSERT of every chunk row

What a small first run does not need is skipped: no checkpoints (there is no
earlier run to resume, and a rerun parses a few hundred bytes again), one
progress write for the whole batch ("parse 0/1", after the claim's "download
0/1") until the success, no turns.
A task whose download or parse fails fails alone (`failed`); a task cancelled
meanwhile is missing from the success and keeps its state.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError

from documents.kinds import FILE_KINDS
from documents.models import Document
from retrieval.embeddings import get_embedder
from retrieval.errors import ProviderUnavailable
from retrieval.meaning import get_meaning
from retrieval.services import chunk_rows

from .blocks import ParseError
from .budget import WorkSpent
from .claims import (
    Finished,
    TaskClaim,
    ingestion_tasks_report_stage,
    ingestion_tasks_succeed,
)
from .embedding import EmbeddingUnavailable, embed_sentences
from .models import ErrorCode, TaskStage
from .parsers import (
    configure_parsers,
    parse_limits,
    parse_memory_bytes,
    parse_timeout_seconds,
)
from .pipeline import IngestionFailure, checked, parse_failure
from .sandbox import Extracted, ParseSandbox, shared_sandbox

logger = logging.getLogger(__name__)

# The kinds read in time linear in their size with no library of binary formats
# (docs/security/parsing.md): small ones are the batch's.
SMALL_KINDS = ("markdown", "text")


def small_content_types() -> list[str]:
    return [
        file_type.content_type
        for name in SMALL_KINDS
        for file_type in FILE_KINDS.named(name).types
    ]


@dataclass
class BatchResult:
    """How each task of a batch ended: succeeded, failed with its own code, or
    not finished (cancelled or taken over, or its document refused to move)."""

    succeeded: list[tuple[TaskClaim, int]] = field(default_factory=list)
    failed: list[tuple[TaskClaim, IngestionFailure]] = field(default_factory=list)
    unfinished: list[TaskClaim] = field(default_factory=list)


@dataclass
class _Parsed:
    claim: TaskClaim
    document: Document
    extracted: Extracted
    seconds: float


class SmallBatch:
    def __init__(
        self,
        claims: list[TaskClaim],
        *,
        interrupt=lambda: None,
        sandbox: ParseSandbox | None = None,
    ) -> None:
        self.claims = claims
        self._interrupt = interrupt
        self._stopped: BaseException | None = None
        self.sandbox = sandbox or shared_sandbox()
        configure_parsers()
        self.embedder = get_embedder()
        self.meaning = get_meaning()
        self.batch_size = settings.INGESTION_EMBED_BATCH

    def interrupt(self) -> None:
        """The worker's checkpoint; what it raises ends the whole batch."""
        try:
            self._interrupt()
        except BaseException as error:
            self._stopped = error
            raise

    def run(self) -> BatchResult:
        """Every task's outcome; raises only what ends the whole batch (the
        interruption's exceptions, a database error)."""
        result = BatchResult()
        started_cpu = time.process_time() + self.sandbox.cpu_seconds()
        parsed = self._parse_all(result)
        if not parsed:
            return result
        shared = self._embedded(parsed, result)
        if shared is None:
            return result
        cpu = time.process_time() + self.sandbox.cpu_seconds() - started_cpu
        share = WorkSpent(round(cpu / len(self.claims), 3), 0)
        finished = []
        for item in parsed:
            chunks = item.extracted.chunks
            finished.append(
                Finished(
                    claim=item.claim,
                    rows=chunk_rows(
                        document=item.document,
                        chunks=chunks,
                        vectors=item.extracted.vectors,
                        embedding_model=self.embedder.name,
                        ingestion_task_id=item.claim.task_id,
                        terms=item.extracted.terms,
                    ),
                    final_progress={
                        "stage": TaskStage.FINALIZING,
                        "completed": len(chunks),
                        "total": len(chunks),
                        "stage_seconds": {
                            TaskStage.PARSE: round(item.seconds, 3),
                            **shared,
                        },
                    },
                    work=share,
                )
            )
        self.interrupt()
        won = {claim.task_id for claim in ingestion_tasks_succeed(finished)}
        for item in parsed:
            if item.claim.task_id in won:
                result.succeeded.append((item.claim, len(item.extracted.chunks)))
            else:
                result.unfinished.append(item.claim)
        return result

    def _parse_all(self, result: BatchResult) -> list[_Parsed]:
        """Each task's document parsed; one that fails is in `result.failed`."""
        documents = Document.objects.in_bulk([c.document_id for c in self.claims])
        ingestion_tasks_report_stage(self.claims[0], stage=TaskStage.PARSE)
        parsed: list[_Parsed] = []
        for claim in self.claims:
            self.interrupt()
            try:
                parsed.append(self._parse(claim, documents.get(claim.document_id)))
            except IngestionFailure as failure:
                result.failed.append((claim, failure))
            except DatabaseError:
                raise
            except Exception as error:
                if error is self._stopped:
                    raise
                # A parser that crashed on this document: it fails alone.
                logger.exception("ingestion crashed task=%s", claim.task_id)
                detail = f"Unexpected error in the worker ({type(error).__name__})."
                failure = IngestionFailure(ErrorCode.INTERNAL_ERROR, detail)
                result.failed.append((claim, failure))
        return parsed

    def _parse(self, claim: TaskClaim, document: Document | None) -> _Parsed:
        if document is None:
            raise IngestionFailure(
                ErrorCode.DOCUMENT_NOT_FOUND, "The document of this task is gone."
            )
        started = time.monotonic()
        try:
            with default_storage.open(document.storage_key, "rb") as original:
                data = original.read()
        except Exception as error:
            raise IngestionFailure(
                ErrorCode.OBJECT_READ_ERROR,
                f"The original could not be read from storage "
                f"({type(error).__name__}).",
            ) from error
        kind = FILE_KINDS.for_content_type(document.content_type).name
        limits = parse_limits()
        try:
            extracted = self.sandbox.extract(
                kind,
                data,
                limits=limits,
                timeout=parse_timeout_seconds(kind, len(data)),
                memory_bytes=parse_memory_bytes(),
                interrupt=self.interrupt,
                embedder=self.embedder
                if getattr(self.embedder, "portable", False)
                else None,
                embed_batch=self.batch_size,
                embed_timeout=settings.INGESTION_EMBED_TIMEOUT_SECONDS,
            )
        except ParseError as error:
            raise parse_failure(error) from error
        return _Parsed(
            claim, document, checked(extracted, limits), time.monotonic() - started
        )

    def _embedded(
        self, parsed: list[_Parsed], result: BatchResult
    ) -> dict[str, float] | None:
        """Chunk vectors the parsers did not make, and every sentence vector
        missing, for the whole batch; the seconds each task is charged per
        stage, or None when the provider failed them all."""
        started = time.monotonic()
        try:
            missing = [item for item in parsed if item.extracted.vectors is None]
            if missing:
                texts = [c.text for item in missing for c in item.extracted.chunks]
                vectors = self._embed(texts)
                start = 0
                for item in missing:
                    count = len(item.extracted.chunks)
                    item.extracted = Extracted(
                        item.extracted.chunks,
                        vectors[start : start + count],
                        item.extracted.terms,
                    )
                    start += count
            embed_sentences(
                self.meaning,
                [chunk for item in parsed for chunk in item.extracted.chunks],
                batch=self.batch_size,
                report=lambda stage, done, total: self.interrupt(),
                turn_over=lambda: None,
            )
        except EmbeddingUnavailable as error:
            failure = IngestionFailure(error.error_code, str(error))
            result.failed += [(item.claim, failure) for item in parsed]
            return None
        seconds = (time.monotonic() - started) / len(parsed)
        return {TaskStage.EMBEDDING: round(seconds, 3)}

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            self.interrupt()
            try:
                parts.append(
                    self.embedder.embed(texts[start : start + self.batch_size])
                )
            except ProviderUnavailable as error:
                raise EmbeddingUnavailable(error) from error
        return np.concatenate(parts).astype(np.float32, copy=False)
