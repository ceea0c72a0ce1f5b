"""Search snapshots as files that the processes of one host share.

A snapshot's arrays are written once, by the first process that needs that
version, as `.npy` files in a directory named by the knowledge base, its
`index_version`, what its published chunks are (how many, the newest id) and what
made their terms and vectors; every process then maps them read-only
(`numpy.load(mmap_mode="r")`), so the operating system keeps one copy in memory
for all of them. A directory is written under a temporary name and renamed into
place, so a reader never sees half of one; a lock file per knowledge base makes
the processes of a host write a version one at a time (the others wait, then
map it). Older versions are deleted once a newer one is in place: a process
still mapping one keeps reading it until it moves on (Linux frees unlinked files
when their last mapping goes).

An approximate vector index (`ann-*` files, retrieval.vector_index) is built by
one process of the host at a time, in the background (`index_lock`), and named
in `ann.json` with the chunk each of its keys stands for, so that every process
can take it up for whatever version it is at.

No Django here: `index` decides when, this module only reads and writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import numpy as np

from . import vector_index
from .bm25 import Postings
from .snapshot import Snapshot, document_runs

_ARRAYS = (
    "chunk_ids",
    "ordinals",
    "lengths",
    "folds",
    "matrix",
    "hashes",
    "starts",
    "rows",
    "counts",
    "document_ids",
    "ann_rows",
    "ann_uncovered",
)
_POSTINGS = ("hashes", "starts", "rows", "counts")


def folder(root: Path, knowledge_base_id: str) -> Path:
    return root / quote(knowledge_base_id, safe="")


def version_name(version: int, fingerprint: str) -> str:
    return f"v{version}-{fingerprint}"


@contextlib.contextmanager
def build_lock(root: Path, knowledge_base_id: str) -> Iterator[None]:
    """Held while one process of the host builds a knowledge base's snapshot."""
    directory = folder(root, knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class HeldLock:
    """A build lock taken by `try_build_lock`; `release()` may be called from
    another thread than the one that took it."""

    def __init__(self, handle) -> None:
        self._handle = handle

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()


def try_build_lock(root: Path, knowledge_base_id: str) -> HeldLock | None:
    """`build_lock` if no other holder has it, else None at once."""
    directory = folder(root, knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / ".lock", "a+b")  # noqa: SIM115 - held past this call
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return HeldLock(handle)


@contextlib.contextmanager
def index_lock(root: Path, knowledge_base_id: str) -> Iterator[bool]:
    """Held while one process of the host builds a knowledge base's approximate
    index; yields False at once when another process holds it. The system frees
    it when its holder dies, killed or not."""
    directory = folder(root, knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".index-lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_index_leftovers(root: Path, knowledge_base_id: str) -> None:
    """Delete the scratch files of index builds that died writing them. Only the
    holder of `index_lock` writes them: call it holding that lock."""
    for entry in folder(root, knowledge_base_id).glob(".ann*.tmp*"):
        entry.unlink(missing_ok=True)


def save_index(
    root: Path, knowledge_base_id: str, file: str, chunk_ids: np.ndarray, made_by: str
) -> None:
    """Name `file` (already in the folder) the knowledge base's newest index,
    whose key k stands for the chunk `chunk_ids[k]`."""
    directory = folder(root, knowledge_base_id)
    stem = file.split(".")[0]
    scratch = directory / f".{stem}.{os.getpid()}.tmp.npy"
    np.save(scratch, np.ascontiguousarray(chunk_ids, dtype=np.int64))
    scratch.rename(directory / f"{stem}.keys.npy")
    pointer = directory / f".ann.json.{os.getpid()}.tmp"
    pointer.write_text(json.dumps({"file": file, "made_by": made_by}))
    pointer.rename(directory / "ann.json")


def newest_index(root: Path, knowledge_base_id: str) -> tuple[str, np.ndarray, str]:
    """The file of the knowledge base's newest index, its keys' chunk ids
    (memory-mapped) and what made its vectors; ("", empty, "") when none."""
    directory = folder(root, knowledge_base_id)
    try:
        pointer = json.loads((directory / "ann.json").read_text())
        file = pointer["file"]
        keys = np.load(directory / f"{file.split('.')[0]}.keys.npy", mmap_mode="r")
    except (OSError, ValueError, KeyError, TypeError):
        return "", np.zeros(0, dtype=np.int64), ""
    return file, keys, pointer.get("made_by", "")


def load(root: Path, knowledge_base_id: str, name: str) -> Snapshot | None:
    """A stored snapshot, its arrays memory-mapped; None when it is not there."""
    directory = folder(root, knowledge_base_id) / name
    try:
        meta = json.loads((directory / "meta.json").read_text())
        arrays = {
            array: np.load(directory / f"{array}.npy", mmap_mode="r")
            for array in _ARRAYS
        }
    except (OSError, ValueError):
        return None
    postings = Postings(*(arrays.pop(part) for part in _POSTINGS))
    ann_rows, ann_uncovered = arrays.pop("ann_rows"), arrays.pop("ann_uncovered")
    ann_file = meta.pop("ann_file", "")
    approximate = None
    if ann_file:
        # Gone when a newer index replaced it: the snapshot takes that one up.
        with contextlib.suppress(OSError):
            approximate = vector_index.opened(
                folder(root, knowledge_base_id) / ann_file, ann_rows, ann_uncovered
            )
    arrays["document_ids"] = _uuids(arrays.pop("document_ids"))
    return Snapshot(
        knowledge_base_id=knowledge_base_id,
        postings=postings,
        approximate=approximate,
        **meta,
        **arrays,
    )


def _uuids(raw: np.ndarray) -> np.ndarray:
    """UUID objects of 16-byte rows. A document's chunks are adjacent rows, so
    each run of equal rows shares one object (a million chunks are a few ten
    thousand documents)."""
    raw = np.asarray(raw)
    if not len(raw):
        return np.zeros(0, dtype=object)
    starts = np.flatnonzero(
        np.concatenate(([True], np.any(raw[1:] != raw[:-1], axis=1)))
    )
    objects = np.empty(len(starts), dtype=object)
    objects[:] = [uuid.UUID(bytes=raw[start].tobytes()) for start in starts]
    return np.repeat(objects, np.diff(np.append(starts, len(raw))))


def _uuid_rows(document_ids: np.ndarray) -> np.ndarray:
    """16-byte rows of UUID objects, each run of one document's rows converted once."""
    starts, documents = document_runs(document_ids)
    raw = np.frombuffer(
        b"".join(document_id.bytes for document_id in documents), dtype=np.uint8
    ).reshape(-1, 16)
    return np.repeat(raw, np.diff(np.append(starts, len(document_ids))), axis=0)


def save(
    root: Path, knowledge_base_id: str, name: str, snapshot: Snapshot, ann_file: str
) -> None:
    """Write a snapshot's arrays and fields as `name`, atomically; `ann_file` is
    its approximate index's file, already stored ("": none)."""
    directory = folder(root, knowledge_base_id)
    final = directory / name
    if final.exists():
        return
    scratch = directory / f".{name}.{os.getpid()}.tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for array, value in _arrays(snapshot).items():
        np.save(scratch / f"{array}.npy", np.ascontiguousarray(value))
    meta = {
        "version": snapshot.version,
        "dimension": snapshot.dimension,
        "stale": snapshot.stale,
        "ann_file": ann_file,
    }
    (scratch / "meta.json").write_text(json.dumps(meta))
    try:
        scratch.rename(final)
    except OSError:  # another process put it there first
        shutil.rmtree(scratch, ignore_errors=True)


def _arrays(snapshot: Snapshot) -> dict[str, np.ndarray]:
    approximate, empty = snapshot.approximate, np.zeros(0, dtype=np.int64)
    postings = snapshot.postings
    return {
        "chunk_ids": snapshot.chunk_ids,
        "ordinals": snapshot.ordinals,
        "lengths": snapshot.lengths,
        "folds": snapshot.folds,
        "matrix": snapshot.matrix,
        "hashes": postings.hashes,
        "starts": postings.starts,
        "rows": postings.rows,
        "counts": postings.counts,
        "document_ids": _uuid_rows(snapshot.document_ids),
        "ann_rows": approximate.rows if approximate else empty,
        "ann_uncovered": approximate.uncovered if approximate else empty,
    }


def prune(root: Path, knowledge_base_id: str, keep: str, keep_file: str) -> None:
    """Delete the knowledge base's other stored versions, and the index files
    (`ann-*`, retrieval.vector_index) other than `keep_file` and the newest."""
    for entry in folder(root, knowledge_base_id).iterdir():
        if entry.name != keep and entry.name.startswith("v") and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
    prune_indexes(root, knowledge_base_id, keep_file)


def prune_indexes(root: Path, knowledge_base_id: str, keep_file: str = "") -> None:
    """Delete the index files other than `keep_file` and the newest. A stored
    version whose index is gone is mapped without one (it takes up the newest)."""
    kept_stems = {
        file.split(".")[0]
        for file in (keep_file, newest_index(root, knowledge_base_id)[0])
        if file
    }
    for entry in folder(root, knowledge_base_id).iterdir():
        if entry.name.startswith("ann-") and entry.name.split(".")[0] not in kept_stems:
            entry.unlink(missing_ok=True)


def discard(root: Path, knowledge_base_id: str) -> None:
    shutil.rmtree(folder(root, knowledge_base_id), ignore_errors=True)
