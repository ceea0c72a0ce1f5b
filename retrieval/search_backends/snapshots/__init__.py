"""The snapshot backend: search served from per-process arrays of the published
chunks, shared between the processes of a host as memory-mapped files.

    backend.py       SnapshotBackend, the seam's SearchBackend, and its Searcher
    cache.py         SnapshotCache: one Snapshot per knowledge base, current with
                     its `index_version`; the background work and the locks
    snapshot.py      Snapshot: a knowledge base's rows as arrays (no Django)
    refresh.py       a snapshot brought to a new version: appended or rebuilt
    bm25.py          keyword scores over the postings (no Django)
    vector_index.py  nearest vectors, exact or through an HNSW index (no Django)
    files.py         the stored versions and their file locks (no Django)
    warmup.py        every snapshot built as a web process starts

It follows `index_version`, which every publish, archive and reindex bumps in
their own transaction: a query reads the versions and refreshes what moved, so
`published` and `withdrawn` have nothing to do. docs/architecture/search.md
draws its threads, locks and invariants.
"""
