"""The backends every test of this folder runs against.

A new search backend passes this suite with one more row in `BACKENDS`: its
`SEARCH_BACKEND` value, whether it runs with the host's shared files, and how
another process (or this one restarted) makes its own, when not by calling the
class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.utils.module_loading import import_string

from retrieval.search_backends import SearchBackend, get_search_backend
from retrieval.search_backends.scratch import ScratchBackend
from retrieval.search_backends.snapshots.backend import SnapshotBackend
from retrieval.search_backends.snapshots.cache import SnapshotCache
from tests.retrieval.backends.library import Library

SNAPSHOTS = "retrieval.search_backends.snapshots.backend.SnapshotBackend"
SCRATCH = "retrieval.search_backends.scratch.ScratchBackend"


def snapshots_of_another_process() -> SearchBackend:
    """The snapshot backend keeps the process's cache: another process has its
    own."""
    return SnapshotBackend(SnapshotCache())


@dataclass(frozen=True)
class BackendUnderTest:
    path: str  # its SEARCH_BACKEND value
    shared_files: bool = False  # SEARCH_SNAPSHOT_DIR set, as the processes of a host
    # Makes the backend of another process; None: the class of `path`, called.
    another_process: Callable[[], SearchBackend] | None = None

    def started(self) -> SearchBackend:
        """The backend another process (or this one after a restart) makes,
        over the same database and files."""
        if self.another_process is not None:
            return self.another_process()
        return import_string(self.path)()


BACKENDS = {
    "snapshots": BackendUnderTest(
        SNAPSHOTS, another_process=snapshots_of_another_process
    ),
    "snapshots-shared": BackendUnderTest(
        SNAPSHOTS, shared_files=True, another_process=snapshots_of_another_process
    ),
    "scratch": BackendUnderTest(SCRATCH),
}


@pytest.fixture(params=list(BACKENDS))
def backend_under_test(request, settings, tmp_path) -> BackendUnderTest:
    chosen = BACKENDS[request.param]
    settings.SEARCH_BACKEND = chosen.path
    if chosen.shared_files:
        settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    return chosen


@pytest.fixture
def backend(backend_under_test) -> SearchBackend:
    """The process's backend, as `SEARCH_BACKEND` names it."""
    chosen = get_search_backend()
    yield chosen
    settle(chosen)


def settle(backend: SearchBackend) -> None:
    """Wait for the work the backend does in the background, if it does any."""
    cache = getattr(backend, "cache", None)
    if cache is not None:
        cache.wait_for(None, timeout=60)


@pytest.fixture
def oracle() -> ScratchBackend:
    return ScratchBackend()


@pytest.fixture
def library(db) -> Library:
    return Library("kb-company", "kb-other")
