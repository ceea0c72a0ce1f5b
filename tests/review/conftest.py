"""The diff tests ingest documents through the same fixtures as the retrieval
tests: the real worker, and a fresh snapshot cache per test."""

from tests.retrieval.conftest import _fresh_snapshots, ingest  # noqa: F401
