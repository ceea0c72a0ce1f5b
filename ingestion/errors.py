"""What each task error code means to a person, and what to do next.

The admin shows these instead of raw codes; `error_detail` stays for operators.
The texts stay English here (the API's); they are marked so that the pages can
show them translated (`ingestion/locale/`).
"""

from __future__ import annotations

from typing import NamedTuple

from django.utils.translation import gettext_noop

from .models import ErrorCode


class ErrorHelp(NamedTuple):
    sentence: str
    next_step: str


REPLACE = gettext_noop("Upload a corrected file as a new version and submit it.")
RETRY_LATER = gettext_noop(
    "Retry the task later; if it keeps failing, tell the operators."
)

ERROR_HELP: dict[str, ErrorHelp] = {
    ErrorCode.PARSE_ERROR: ErrorHelp(
        gettext_noop(
            "The file could not be read as a document: it may be damaged or not the "
            "format its name says."
        ),
        REPLACE,
    ),
    ErrorCode.OBJECT_READ_ERROR: ErrorHelp(
        gettext_noop("The uploaded original could not be read from storage."),
        RETRY_LATER,
    ),
    ErrorCode.EMPTY_DOCUMENT: ErrorHelp(
        gettext_noop(
            "The file holds no text that can be searched (for example a scanned "
            "image without text)."
        ),
        gettext_noop("Upload a version with selectable text."),
    ),
    ErrorCode.DOCUMENT_NOT_FOUND: ErrorHelp(
        gettext_noop("The document was deleted before it could be processed."),
        gettext_noop("Nothing to do; upload it again if it is still needed."),
    ),
    ErrorCode.INTERNAL_ERROR: ErrorHelp(
        gettext_noop("Something unexpected went wrong while processing the file."),
        gettext_noop("Retry the task; if it fails again, tell the operators."),
    ),
    ErrorCode.PROVIDER_UNAVAILABLE: ErrorHelp(
        gettext_noop("The embedding service did not answer."), RETRY_LATER
    ),
    ErrorCode.DATABASE_UNAVAILABLE: ErrorHelp(
        gettext_noop("The worker lost its connection to the database."), RETRY_LATER
    ),
    ErrorCode.LEASE_EXPIRED: ErrorHelp(
        gettext_noop(
            "The worker processing the file stopped answering (it may have crashed "
            "or been restarted)."
        ),
        gettext_noop("Retry the task."),
    ),
    ErrorCode.FILE_TOO_LARGE: ErrorHelp(
        gettext_noop(
            "The file is too large to process within the size or memory limit."
        ),
        gettext_noop(
            "Split the file into smaller documents, or ask the operators to raise "
            "the limit."
        ),
    ),
    ErrorCode.TOO_MANY_PAGES: ErrorHelp(
        gettext_noop("The PDF has more pages than the page limit."),
        gettext_noop(
            "Split the PDF into smaller documents, or ask the operators to raise "
            "the limit."
        ),
    ),
    ErrorCode.PARSE_TIMEOUT: ErrorHelp(
        gettext_noop("Reading the file took longer than the time limit."),
        gettext_noop(
            "Split or simplify the file (for example save it again as a plain PDF), "
            "then upload it as a new version."
        ),
    ),
    ErrorCode.PASSWORD_PROTECTED: ErrorHelp(
        gettext_noop(
            "The file is protected by a password, so its text cannot be read."
        ),
        gettext_noop(
            "Remove the password (save an unprotected copy), then upload it as a new "
            "version."
        ),
    ),
    ErrorCode.OCR_UNAVAILABLE: ErrorHelp(
        gettext_noop(
            "The file holds scanned pages or images that need text recognition (OCR), "
            "which is switched off or not installed on this server."
        ),
        gettext_noop(
            "Ask the operators to enable OCR (see /api/health/ready), then retry the "
            "task; or upload a version with selectable text."
        ),
    ),
    ErrorCode.TEXT_TOO_LARGE: ErrorHelp(
        gettext_noop("The file holds more text than one document may have."),
        gettext_noop(
            "Split the file into smaller documents, or ask the operators to raise "
            "INGESTION_MAX_TEXT_CHARS."
        ),
    ),
    ErrorCode.TOO_MANY_CHUNKS: ErrorHelp(
        gettext_noop(
            "The file cuts into more passages than one document may have (often a "
            "file of thousands of tiny sections or headings)."
        ),
        gettext_noop(
            "Split or simplify the file, or ask the operators to raise "
            "INGESTION_MAX_CHUNKS_PER_DOCUMENT (or, for a text, Markdown or HTML "
            "file, INGESTION_MAX_BLOCKS_PER_DOCUMENT)."
        ),
    ),
    ErrorCode.WORK_BUDGET_EXCEEDED: ErrorHelp(
        gettext_noop(
            "Processing the file took more work than one document may use (CPU time "
            "or pages read by text recognition), counted over all its attempts."
        ),
        gettext_noop(
            "Split the file into smaller documents or upload a version with "
            "selectable text; or ask the operators to raise "
            "INGESTION_WORK_BUDGET_CPU_SECONDS or INGESTION_WORK_BUDGET_OCR_PAGES, "
            "then retry the task."
        ),
    ),
}

UNKNOWN = ErrorHelp(
    gettext_noop("The task stopped with an error this version does not describe."),
    gettext_noop("Retry the task; if it fails again, tell the operators."),
)


def error_help(code: str | None) -> ErrorHelp | None:
    """The help for `code`; None when there is no error."""
    if not code:
        return None
    return ERROR_HELP.get(code, UNKNOWN)


def describe(code: str | None) -> str:
    """One line for a person: code, what happened, what to do next."""
    help_ = error_help(code)
    if help_ is None:
        return ""
    return f"{code}: {help_.sentence} {help_.next_step}"
