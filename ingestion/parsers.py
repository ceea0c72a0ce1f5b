"""The worker's parser processes as the settings say: the limits of one parse,
its time and memory, and starting, warming and checking the parsers
(`sandbox/`)."""

from __future__ import annotations

import logging

from django.conf import settings

from documents.kinds import FILE_KINDS

from .blocks import ParseLimits
from .sandbox import (
    SandboxOptions,
    configure,
    memory_limit_problem,
    parser_account,
    shared_sandbox,
)

logger = logging.getLogger(__name__)


def parse_limits() -> ParseLimits:
    return ParseLimits(
        max_pdf_pages=settings.INGESTION_MAX_PDF_PAGES,
        max_docx_uncompressed_bytes=settings.INGESTION_MAX_DOCX_UNCOMPRESSED_BYTES,
        max_docx_compression_ratio=settings.INGESTION_MAX_DOCX_COMPRESSION_RATIO,
        max_slides=settings.INGESTION_MAX_SLIDES,
        max_sheet_cells=settings.INGESTION_MAX_SHEET_CELLS,
        ocr_enabled=settings.OCR_ENABLED,
        ocr_languages=tuple(settings.OCR_LANGUAGES),
        ocr_page_seconds=settings.OCR_PAGE_TIMEOUT_SECONDS or None,
        max_ocr_pages=settings.OCR_MAX_PAGES or None,
        max_text_chars=settings.INGESTION_MAX_TEXT_CHARS or None,
        max_chunks=settings.INGESTION_MAX_CHUNKS_PER_DOCUMENT or None,
        max_blocks=settings.INGESTION_MAX_BLOCKS_PER_DOCUMENT or None,
    )


def parse_timeout_seconds(kind: str, size: int) -> float:
    """The wall-clock limit of parsing `size` bytes of `kind`: text kinds, read
    in time linear in their size (docs/security/parsing.md), get a base plus a
    share per MiB, so that a small hostile file fails fast; every limit is at
    most INGESTION_PARSE_TIMEOUT_SECONDS."""
    ceiling = settings.INGESTION_PARSE_TIMEOUT_SECONDS
    if not FILE_KINDS.named(kind).text:
        return ceiling
    scaled = (
        settings.INGESTION_TEXT_PARSE_BASE_SECONDS
        + settings.INGESTION_TEXT_PARSE_SECONDS_PER_MIB * size / 2**20
    )
    return min(ceiling, round(scaled, 1))


def parse_memory_bytes() -> int | None:
    return settings.INGESTION_PARSE_MEMORY_BYTES or None


def configure_parsers() -> None:
    """Have this process's parsers start as the settings say (user, environment,
    reply size); does nothing when they already do."""
    configure(
        SandboxOptions(
            user=settings.INGESTION_PARSER_USER,
            passed_variables=tuple(settings.INGESTION_PARSER_ENV),
            reply_max_bytes=settings.INGESTION_PARSE_REPLY_MAX_BYTES,
        )
    )


def check_parsers() -> None:
    """At a worker's start-up: SandboxError when the parsers cannot run as the
    settings say; a warning when their memory limit cannot be applied."""
    parser_account(settings.INGESTION_PARSER_USER)
    problem = memory_limit_problem(parse_memory_bytes())
    if problem:
        logger.warning(
            "parser memory limit cannot be applied: %s; parsers run without "
            "INGESTION_PARSE_MEMORY_BYTES=%s",
            problem,
            parse_memory_bytes(),
        )
    configure_parsers()


def warm_parser() -> None:
    """Get this process's parsers ready ahead of the first task, without waiting."""
    configure_parsers()
    shared_sandbox().prepare(
        memory_bytes=parse_memory_bytes(),
        processes=settings.INGESTION_PARSE_PROCESSES,
    )


def start_parsers() -> None:
    """Have this process's parsers running (started, or restarted after a kill), so
    that the next task does not wait for them; does nothing when they are."""
    configure_parsers()
    shared_sandbox().start(
        memory_bytes=parse_memory_bytes(),
        processes=settings.INGESTION_PARSE_PROCESSES,
    )
