"""The evaluations search and answer through the same fixtures as the retrieval
tests: a fresh snapshot cache per test, the stub provider for the LLM runs."""

from tests.retrieval.conftest import (  # noqa: F401
    _fresh_snapshots,
    ingest,
    stub_provider,
    use_stub,
)
