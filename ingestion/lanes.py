"""Lanes: light and heavy tasks, so that a host can keep workers for light work.

A task's lane is set at submit from what is known without reading the file: an
image is read by OCR, a file past INGESTION_LIGHT_MAX_BYTES is large, both heavy;
anything else starts light. A PDF's cost shows as soon as its parse starts: the
parsers say how many pages it has before reading any, and ask for OCR before
the first scanned page. The pipeline then moves the task to the heavy lane
(`heavy_reason`); a worker that does not take heavy work gives it back at once,
uncharged, for a worker that does (`claims.ingestion_task_release`).

A running task yields its worker at its next checkpoint once its turn is over
and others wait (`turn_is_over`); a heavy task's turn is short when light work
waits.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from documents.kinds import FILE_KINDS

from .models import TaskLane

ALL_LANES = frozenset(TaskLane.values)


def parse_lanes(text: str) -> frozenset[str]:
    """`light,heavy` -> the lanes; ValueError for an unknown or empty list."""
    lanes = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = lanes - ALL_LANES
    if not lanes or unknown:
        raise ValueError(
            f"lanes are a comma-separated list of {', '.join(TaskLane.values)}"
        )
    return lanes


def lane_at_submit(*, content_type: str, size_bytes: int) -> str:
    """The lane a task starts in, from its document's type and size."""
    try:
        read_by_ocr = FILE_KINDS.for_content_type(content_type).read_by_ocr
    except ValueError:
        read_by_ocr = False  # the parse will say what is wrong with it, quickly
    if read_by_ocr or size_bytes > settings.INGESTION_LIGHT_MAX_BYTES:
        return TaskLane.HEAVY
    return TaskLane.LIGHT


def heavy_reason(*, pages: int | None = None, ocr: bool = False) -> str | None:
    """Why a task found to have `pages` pages, or to need OCR, is heavy; None
    while it may stay light."""
    if ocr:
        return "it has pages to read by OCR"
    if pages is not None and pages > settings.INGESTION_LIGHT_MAX_PAGES:
        return f"it has {pages} pages"
    return None


def turn_is_over(
    *,
    lane: str,
    ran: float,
    waiting: Iterable[str],
    turn: float,
    light_wait: float,
    found_heavy: bool = False,
) -> bool:
    """Whether a task of `lane` that has run `ran` seconds gives its worker up to
    tasks of the `waiting` lanes: after `turn` seconds to any; when it is heavy
    and light work waits, after `light_wait` (a small file then waits seconds
    behind a long scan, not a whole turn), or at once if it was `found_heavy` in
    this run (claimed as light, ahead of light work it now holds up)."""
    waiting = set(waiting)
    if not turn or not waiting:
        return False
    if lane == TaskLane.HEAVY and TaskLane.LIGHT in waiting:
        return found_heavy or ran >= min(turn, light_wait)
    return ran >= turn


def lanes_text(lanes: Iterable[str]) -> str:
    return ",".join(lane for lane in TaskLane.values if lane in lanes)
