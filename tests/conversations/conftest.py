"""Conversations answer through the same fixtures as the retrieval tests: a fresh
snapshot cache per test, documents ingested by the real worker, the stub provider."""

from tests.retrieval.conftest import (  # noqa: F401
    _fresh_snapshots,
    ingest,
    stub_provider,
    use_stub,
)
