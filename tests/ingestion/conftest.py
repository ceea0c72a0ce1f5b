from __future__ import annotations

from pathlib import Path

import pytest

from ingestion import services
from ingestion.worker import Worker

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture
def submit(editor):
    """Submit a document as the editor; returns the queued task."""

    def make(document):
        return services.document_submit(user=editor, document_id=document.pk)

    return make


@pytest.fixture
def run_worker():
    """Run the real worker loop in this process; returns (stats, output lines)."""

    def run(task_id=None, **options):
        lines: list[str] = []
        worker = Worker(
            worker_id=options.pop("worker_id", "test-worker"),
            write=lines.append,
            **options,
        )
        stats = worker.run(task_id)
        return stats, lines

    return run
