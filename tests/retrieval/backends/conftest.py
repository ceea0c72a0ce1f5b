"""The backends every test of this folder runs against.

A new search backend passes this suite with one more row in `BACKENDS`: its
`SEARCH_BACKEND` value, and whether it is run with the host's shared files.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.conf import settings as django_settings
from django.utils.module_loading import import_string

from retrieval.search_backends import SearchBackend, get_search_backend
from retrieval.search_backends.scratch import ScratchBackend
from tests.retrieval.backends.library import Library

SCRATCH = "retrieval.search_backends.scratch.ScratchBackend"


@dataclass(frozen=True)
class BackendUnderTest:
    path: str  # its SEARCH_BACKEND value
    shared_files: bool = False  # SEARCH_SNAPSHOT_DIR set, as the processes of a host


BACKENDS = {
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


def restarted() -> SearchBackend:
    """The backend another process (or this one after a restart) would make,
    over the same database and files."""
    return import_string(django_settings.SEARCH_BACKEND)()


def settle(backend: SearchBackend) -> None:
    """Wait for the work the backend does in the background, if it does any."""
    cache = getattr(backend, "cache", None)
    if cache is not None:
        cache.wait_for_background(timeout=60)


@pytest.fixture
def oracle() -> ScratchBackend:
    return ScratchBackend()


@pytest.fixture
def library(db) -> Library:
    return Library("kb-company", "kb-other")
