"""Memory per chunk of today's search engine: how many chunks fit one host.

Per size and chunk length, three fresh processes, so that each measures only
what it adds to its own start:

- build: a snapshot made as a refresh makes it (`refresh.rebuilt` over the rows
  `refresh.added_rows` would read: one UUID object per row, as the database
  gives them), then its approximate index (`vector_index.build`), then both
  stored as a host's processes share them (`snapshot_files.store`). It reports
  each array's `nbytes` per chunk, the process's resident memory (RSS) the
  snapshot and the index added, the peak while building, and the bytes stored.
- map: a new process maps the stored version (`snapshot_files.load`) and
  searches it with 100 CMRC questions by keyword, by the approximate vector list
  and by exact vector search (every row's vector read). It reports its anonymous
  memory (private to each process) and its file-backed memory (the page cache's
  one copy for every process of the host).
- database: the real path for comparison, `million_chunks.py`'s chunks (5
  sentences) written to SQLite, built by a cold query with private snapshots.
- overhead: what a web process holds before any snapshot (Django, jieba, E5).

Then it derives how many chunks a 24 GiB and a 64 GiB host hold per layout
(`host_rows`).

Chunks are made as in `million_chunks.py` (CMRC 2018 dev sentences, consecutive
ones then two from elsewhere, all different; 20 chunks a document), their terms
by `retrieval.terms` as ingestion stores them. Vectors are random unit vectors
of E5's dimension (384): bytes and the index's graph do not depend on the
values, and embedding 100,000 texts with E5 takes hours on this host.

    python bench/memory_per_chunk.py [--sizes 10000 100000] [--sentences 5 12]
        [--reuse]   # keep the measurements an earlier run stored under var/bench
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
from common import REPO, markdown_table, setup_django, write_section

DIMENSION = 384  # multilingual-e5-small, the default embedder
PER_DOCUMENT = 20
DATABASE = REPO / "var" / "bench" / "memory.sqlite3"
ROOT = REPO / "var" / "bench" / "memory-snapshots"
RESULTS = REPO / "var" / "bench" / "memory-per-chunk.json"
MIB = 2**20


def resident() -> dict[str, int]:
    """This process's resident bytes: all, anonymous, file-backed."""
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file"}
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in fields:
            found[fields[name]] = int(value.split()[0]) * 1024
    return found


def settle() -> dict[str, int]:
    """Resident bytes once freed memory went back to the system."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return resident()


class Peak:
    """The highest RSS seen while the block runs (sampled every 5 ms)."""

    def __enter__(self) -> Peak:
        self.highest = resident()["rss"]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(0.005):
            pages = int(Path("/proc/self/statm").read_text().split()[1])
            self.highest = max(self.highest, pages * page)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def sentences() -> tuple[list[Counter], list[bool]]:
    """The token counts of each CMRC dev sentence (million_chunks' sentences),
    and whether each changes in simplified script."""
    import million_chunks

    text, _ = million_chunks.cmrc()
    million_chunks.load_sentences(text)
    return million_chunks.SENTENCE_TOKENS, million_chunks.SENTENCE_FOLDS


def picks(index: int, count: int, per_chunk: int) -> list[int]:
    """`per_chunk - 2` consecutive sentences and two from elsewhere (the
    pattern of `million_chunks.chunk_sentences`, of any length)."""
    first = index % count
    other = ((index // count) * 7919 + first * 31 + 17) % count
    run = [(first + i) % count for i in range(per_chunk - 2)]
    return [*run, other, (other + 1) % count]


def added_rows(size: int, per_chunk: int, tokens, text_folds, model: str):
    """What `refresh.added_rows` would read for `size` published chunks."""
    from retrieval.search_backends.snapshots.refresh import Added
    from retrieval.terms import counted_terms, decode

    rng = np.random.default_rng(size)
    documents = [uuid.uuid4() for _ in range(-(-size // PER_DOCUMENT))]
    hashes, counts, lengths, folds, embeddings = [], [], [], [], []
    for index in range(size):
        pick = picks(index, len(tokens), per_chunk)
        terms = counted_terms(
            sum((tokens[i] for i in pick), Counter()),
            any(text_folds[i] for i in pick),
        )
        chunk_hashes, chunk_counts = decode(terms.terms)
        hashes.append(chunk_hashes)
        counts.append(chunk_counts)
        lengths.append(terms.length)
        folds.append(terms.folds)
        vector = rng.standard_normal(DIMENSION).astype(np.float32)
        embeddings.append((vector / np.linalg.norm(vector)).astype("<f4").tobytes())
    sizes = [len(h) for h in hashes]
    return Added(
        chunk_ids=np.arange(1, size + 1, dtype=np.int64),
        document_ids=np.array(
            [documents[i // PER_DOCUMENT].bytes for i in range(size)], dtype="V16"
        ),
        ordinals=(np.arange(size) % PER_DOCUMENT).astype(np.int32),
        lengths=np.array(lengths, dtype=np.float32),
        folds=np.array(folds, dtype=bool),
        hashes=np.concatenate(hashes),
        rows=np.repeat(np.arange(size, dtype=np.int32), sizes),
        counts=np.concatenate(counts),
        embeddings=embeddings,
        models=[model] * size,
        stale=0,
    )


def array_bytes(snapshot) -> dict[str, int]:
    postings = snapshot.postings
    return {
        "matrix": snapshot.matrix.nbytes,
        "postings": postings.nbytes(),
        "rows": sum(
            getattr(snapshot, name).nbytes
            for name in ("chunk_ids", "document_ids", "ordinals", "lengths", "folds")
        ),
        "postings_entries": len(postings.rows),
        "terms": len(postings.hashes),
    }


def build(size: int, per_chunk: int) -> dict:
    """A snapshot built, indexed and stored by this process."""
    setup_django(f"sqlite:///{DATABASE}", fresh=False)
    from retrieval.embeddings import get_embedder
    from retrieval.search_backends.snapshots import files as snapshot_files
    from retrieval.search_backends.snapshots import refresh, vector_index
    from retrieval.search_backends.snapshots.snapshot import Snapshot

    tokens, text_folds = sentences()
    kb_id = f"memory-{per_chunk}-{size}"
    start = settle()
    with Peak() as peak:
        added = added_rows(size, per_chunk, tokens, text_folds, get_embedder().name)
        snapshot = refresh.rebuilt(
            Snapshot(kb_id, -1, DIMENSION, np.zeros((0, DIMENSION), np.float32)),
            1,
            refresh.Changes(np.zeros(0, dtype=bool), added),
        )
        del added
    built = settle()
    started = time.perf_counter()
    snapshot = dataclasses.replace(
        snapshot, approximate=vector_index.build(snapshot.matrix)
    )
    index_seconds = time.perf_counter() - started
    indexed = settle()
    shutil.rmtree(snapshot_files.folder(ROOT, kb_id), ignore_errors=True)
    folder = snapshot_files.folder(ROOT, kb_id)
    folder.mkdir(parents=True)
    snapshot_files.store(ROOT, kb_id, "v1", snapshot)
    ann_file = snapshot.approximate.file
    stored = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {
        **array_bytes(snapshot),
        # its file: usearch's memory_usage counts what it reserved
        "index": (folder / ann_file).stat().st_size,
        "private": built["rss"] - start["rss"],
        "private_index": indexed["rss"] - built["rss"],
        "peak": peak.highest - start["rss"],  # the rows read included
        "index_seconds": index_seconds,
        "stored": stored,
    }


def mapped(size: int, per_chunk: int) -> dict:
    """A stored version mapped by a new process, then searched."""
    sys.path.insert(0, str(REPO))  # no Django here: the engine's modules need none
    import million_chunks

    from retrieval.search_backends.snapshots import files as snapshot_files
    from retrieval.search_backends.snapshots import vector_index
    from retrieval.tokens import query_tokens

    _, questions = million_chunks.cmrc()
    queries = [query_tokens(q) for q in questions[:100]]  # jieba loaded here
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((100, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    start = settle()
    snapshot = snapshot_files.load(ROOT, f"memory-{per_chunk}-{size}", "v1")
    for tokens, vector in zip(queries, vectors, strict=True):
        snapshot.keyword_top(tokens, 30)
        snapshot.nearest(vector, 30)  # the approximate list
        vector_index.nearest(snapshot.matrix, None, vector, 30)  # every row read
    searched = settle()
    return {
        "exact_anon": searched["anon"] - start["anon"],
        "exact_file": searched["file"] - start["file"],
    }


def from_database(size: int) -> dict:
    """The whole path of a cold query in a process with private snapshots:
    `million_chunks.py`'s chunks read from the database and built."""
    os.environ["SEARCH_SNAPSHOT_DIR"] = ""
    setup_django(f"sqlite:///{DATABASE}", fresh=False)
    from retrieval.search_backends.snapshots.cache import snapshot_cache
    from retrieval.tokens import query_tokens

    query_tokens("预算在哪一年通过？")  # jieba loaded: not the snapshot's
    start = settle()
    with Peak() as peak:
        (snapshot,) = snapshot_cache.snapshots([f"scale-{size}"])
    built = settle()
    return {
        "arrays": snapshot.nbytes(),
        "private": built["rss"] - start["rss"],
        "peak": peak.highest - start["rss"],
    }


def populated(sizes: list[int]) -> None:
    """`million_chunks.py`'s knowledge bases of these sizes, written once."""
    import multiprocessing

    import million_chunks
    from django.db import connections

    from documents.models import KnowledgeBase

    missing = [
        s for s in sizes if not KnowledgeBase.objects.filter(id=f"scale-{s}").exists()
    ]
    if not missing:
        return
    text, _ = million_chunks.cmrc()
    million_chunks.load_sentences(text)
    connections.close_all()  # the pool's processes never use the database
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for size in missing:
            million_chunks.populate(size, pool)


def overhead() -> dict:
    """A web process before any snapshot: Django, jieba, E5, one query embedded."""
    os.environ["EMBEDDING_PROVIDER"] = "e5-small"
    setup_django(f"sqlite:///{DATABASE}", fresh=False)
    import retrieval.search  # noqa: F401  (what a web process imports)
    from retrieval.embeddings import get_embedder
    from retrieval.tokens import query_tokens

    query_tokens("预算在哪一年通过？")
    embedder = get_embedder()
    embedder.embed_queries(["预算在哪一年通过？"])
    memory = settle()
    return {**memory, "embedder": embedder.name}


def child(kind: str, *arguments: int, reuse: bool = False) -> dict:
    """Run one measurement in a new process (its JSON is the last line), or,
    with `reuse`, take the one an earlier run of this code stored."""
    key = " ".join([kind, *map(str, arguments)])
    stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if reuse and key in stored:
        return stored[key]
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, *map(str, arguments)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO / "bench",
        env={
            **os.environ,
            "EMBEDDING_DIMENSION": str(DIMENSION),
            "NUMPY_MADVISE_HUGEPAGE": "0",
        },
    ).stdout
    stored[key] = json.loads(out.strip().splitlines()[-1])
    RESULTS.write_text(json.dumps(stored, indent=1))
    return stored[key]


def per_chunk_rows(results: list[tuple[int, int, dict, dict]]) -> list[list]:
    rows = []
    for size, length, made, seen in results:
        rows.append(
            [
                length,
                size,
                made["postings_entries"] / size,
                made["matrix"] / size,
                made["postings"] / size,
                made["rows"] / size,
                made["index"] / size,
                (made["matrix"] + made["postings"] + made["rows"] + made["index"])
                / size,
                made["private"] / size,
                made["private_index"] / size,
                made["peak"] / size,
                made["stored"] / size,
                seen["exact_anon"] / size,
                seen["exact_file"] / size,
            ]
        )
    return rows


HEADERS = [
    "sentences a chunk",
    "chunks",
    "postings a chunk",
    "matrix B",
    "postings B",
    "per-row arrays B",
    "HNSW int8 index B",
    "arrays in all B",
    "RSS of the built snapshot B",
    "RSS of its index B",
    "peak while building B",
    "stored B",
    "mapped: anonymous B (each process)",
    "mapped: file, exact searches B (once a host)",
]


# What a host needs beside search: the kernel, page tables, logs, a margin.
RESERVED = 2 * 2**30
HOSTS = (24 * 2**30, 64 * 2**30)
WEB_PROCESSES = (2, 8)  # WEB_WORKERS' default, and a busy host


def host_rows(results, fixed: dict) -> list[list]:
    """Chunks one host holds, per layout, from the largest size measured of
    each chunk length (every chunk in one knowledge base past
    SEARCH_ANN_MIN_CHUNKS: the index counted). "Cold build": a process builds
    a version from the database (as after a deploy) meanwhile."""
    rows = []
    largest = max(size for size, *_ in results)
    for size, length, made, seen in results:
        if size != largest:
            continue
        private = (made["private"] + made["private_index"]) / size
        building = (made["peak"] - made["private"]) / size
        stored, anonymous = made["stored"] / size, seen["exact_anon"] / size
        for processes in WEB_PROCESSES:
            layouts = {
                "private snapshots": processes * private,
                "private snapshots, cold build": processes * private + building,
                "shared files": processes * anonymous + stored,
                "shared files, cold build": processes * anonymous
                + stored
                + made["peak"] / size,
            }
            for layout, per_chunk in layouts.items():
                room = [
                    host - RESERVED - processes * fixed["anon"] - fixed["file"]
                    for host in HOSTS
                ]
                rows.append(
                    [length, processes, layout, per_chunk]
                    + [f"{r / per_chunk / 1e6:.1f} M" for r in room]
                )
    return rows


def report(results, real, fixed: dict) -> str:
    database = markdown_table(
        ["chunks", "arrays B", "RSS of the snapshot B", "peak while building B"],
        [
            [size, m["arrays"] / size, m["private"] / size, m["peak"] / size]
            for size, m in real
        ],
    )
    hosts = markdown_table(
        [
            "sentences a chunk",
            "web processes",
            "layout",
            "bytes a chunk",
            *(f"chunks on {host // 2**30} GiB" for host in HOSTS),
        ],
        host_rows(results, fixed),
    )
    return "\n\n".join(
        [
            markdown_table(HEADERS, per_chunk_rows(results)),
            "The same through the database, as a cold query builds it in a process "
            "with private snapshots (`snapshot_cache.snapshots`, the chunks of "
            "`million_chunks.py`, 5 sentences, written with the hashing embedder "
            f"at {DIMENSION} dimensions; no approximate index below "
            "`SEARCH_ANN_MIN_CHUNKS`):\n\n" + database,
            "Building the index: "
            + ", ".join(
                f"{size:,} chunks of {length} sentences {made['index_seconds']:.0f} s"
                for size, length, made, _ in results
            )
            + f". A web process before any snapshot ({fixed['embedder']}, jieba, "
            f"Django): RSS {fixed['rss'] / MIB:.0f} MiB, of which anonymous "
            f"{fixed['anon'] / MIB:.0f} MiB and file-backed "
            f"{fixed['file'] / MIB:.0f} MiB.",
            f"Chunks one host holds ({RESERVED // 2**30} GiB kept for the rest, "
            "each web process's own memory counted; `host_rows` says how):\n\n" + hosts,
        ]
    )


def measure_child(kind: str, numbers: list[str]) -> None:
    run = {
        "build": build,
        "map": mapped,
        "database": from_database,
        "overhead": overhead,
    }[kind]
    measured = run(*(int(n) for n in numbers))
    measured["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(measured))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--sentences", type=int, nargs="*", default=[5, 12])
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the measurements of an earlier run"
    )
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["EMBEDDING_PROVIDER"] = "hashing"  # named as E5 is, at its dimension
    if args.child:
        measure_child(args.child[0], args.child[1:])
        return
    setup_django(f"sqlite:///{DATABASE}", fresh=False)  # migrated once
    populated(args.sizes)
    results = []
    for length in args.sentences:
        for size in args.sizes:
            made = child("build", size, length, reuse=args.reuse)
            seen = child("map", size, length, reuse=args.reuse)
            results.append((size, length, made, seen))
            print(size, length, made, seen, file=sys.stderr, flush=True)
    real = [[size, child("database", size, reuse=args.reuse)] for size in args.sizes]
    body = report(results, real, child("overhead", reuse=args.reuse))
    print(body)
    if not args.no_write:
        write_section(
            "memory-per-chunk",
            "Memory per chunk",
            "`python bench/memory_per_chunk.py "
            f"--sizes {' '.join(map(str, args.sizes))} "
            f"--sentences {' '.join(map(str, args.sentences))}`: see its docstring. "
            "Bytes per chunk: each `B` column divides by the chunk count. The "
            "index's build seconds are of random vectors with other jobs on the "
            "cores: not a measure of build time (`million_chunks.py` has that).",
            body,
        )


if __name__ == "__main__":
    main()
