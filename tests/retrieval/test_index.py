"""`retrieval/index.py`: the search snapshots of the published chunks, and their
refreshes.

Snapshots shared as files between the processes of a host are tested in
`test_shared_snapshots.py`; the terms stored with each chunk, which a snapshot reads
instead of tokenizing, in `test_stored_terms.py`.
"""

from __future__ import annotations

import pytest

from retrieval.models import Chunk
from retrieval.search import search
from retrieval.search_backends.snapshots.cache import snapshot_cache
from retrieval.tokens import normalized
from tests.retrieval.search_samples import HOTEL, HOTEL_TRADITIONAL, LEAVE

pytestmark = pytest.mark.django_db


class TestSnapshots:
    def test_no_rebuild_per_query(
        self, ingest, viewer, knowledge_base, django_assert_max_num_queries
    ):
        ingest(knowledge_base, LEAVE)
        search(user=viewer, question="annual leave")
        snapshot = snapshot_cache.snapshots(["kb-company"])[0]
        # Memberships with their index versions, rerank texts, passages: no
        # chunk scan.
        with django_assert_max_num_queries(3):
            search(user=viewer, question="annual leave")
        assert snapshot_cache.snapshots(["kb-company"])[0] is snapshot

    def test_a_keyword_search_reads_visibility_and_passages_only(
        self, ingest, viewer, knowledge_base, django_assert_num_queries
    ):
        ingest(knowledge_base, LEAVE)
        search(user=viewer, question="annual leave", profile="keyword")
        # One query for the caller's knowledge bases with their index versions,
        # one for the passages' rows.
        with django_assert_num_queries(2):
            run = search(user=viewer, question="annual leave", profile="keyword")
        assert run.passages

    def test_refresh_is_incremental(self, ingest, viewer, knowledge_base):
        first = ingest(knowledge_base, LEAVE, filename="a.md")
        search(user=viewer, question="leave")
        before = snapshot_cache.snapshots(["kb-company"])[0]

        ingest(knowledge_base, HOTEL, filename="b.md")
        after = snapshot_cache.snapshots(["kb-company"])[0]

        assert after is not before
        assert after.version > before.version
        added = Chunk.objects.filter(document__filename="b.md").count()
        assert first.pk.bytes in set(after.document_ids.tolist())
        assert after.size == before.size + added
        kept = after.matrix[: before.size]
        assert (kept == before.matrix).all()

    def test_the_rerank_converts_only_rows_that_change_in_simplified(
        self, ingest, knowledge_base
    ):
        leave = ingest(knowledge_base, LEAVE, filename="leave.md")
        ingest(knowledge_base, HOTEL, filename="简体.md")
        ingest(knowledge_base, HOTEL_TRADITIONAL, filename="繁體.md")
        before = snapshot_cache.snapshots(["kb-company"])[0]
        # A refresh that drops the archived version keeps the flags on their rows.
        ingest(
            knowledge_base,
            b"# Leave\n\nEvery employee receives 28 days of paid annual leave.\n",
            filename="leave.md",
            family_id=leave.family_id,
            version=2,
        )
        snapshot = snapshot_cache.snapshots(["kb-company"])[0]
        assert snapshot is not before
        assert leave.pk.bytes not in set(snapshot.document_ids.tolist())

        texts = dict(Chunk.objects.values_list("id", "text"))
        filenames = dict(Chunk.objects.values_list("id", "document__filename"))
        flagged = {}
        for row, chunk_id in enumerate(snapshot.chunk_ids):
            text, fold = texts[int(chunk_id)], bool(snapshot.folds[row])
            assert normalized(text, fold=fold) == normalized(text)
            flagged[filenames[int(chunk_id)]] = fold
        assert flagged == {"leave.md": False, "简体.md": False, "繁體.md": True}

    def test_memory_per_chunk_is_reported(self, ingest, knowledge_base):
        ingest(knowledge_base, LEAVE * 3)
        snapshot = snapshot_cache.snapshots(["kb-company"])[0]
        assert snapshot.nbytes() > 0
