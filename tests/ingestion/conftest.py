from __future__ import annotations

import shutil
import tempfile
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


@pytest.fixture
def parser_writable_dir():
    """A folder parser processes may write in: they run as another user when the
    tests run as root (docs/security/sandbox.md), and tmp_path is root's alone."""
    folder = Path(tempfile.mkdtemp(prefix="curator-parsers-"))
    folder.chmod(0o777)  # a test's scratch folder, removed after it
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
