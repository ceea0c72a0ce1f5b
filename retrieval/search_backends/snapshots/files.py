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

A version brought up to date by appending (`Snapshot.segmented`) is stored as
its rows appended since its base and the rows it no longer searches, naming the
stored version that holds the base: a publish writes its new rows, not the
whole snapshot again, and a process already at that base reads only those. The
same version built in one piece again is stored beside it (`whole_name`) and
becomes the base of the next.

An approximate vector index (`ann-*` files, `vector_index`) is built by
one process of the host at a time, in the background (`index_lock`), and named
in `ann.json` with the chunk each of its keys stands for, so that every process
can take it up for whatever version it is at.

No Django here: `cache` decides when, this module only reads and writes.
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
_APPENDED_ARRAYS = (
    *_ARRAYS,
    "removed",
    "removed_in_base",
    "removed_in_appended",
)


def folder(root: Path, knowledge_base_id: str) -> Path:
    return root / quote(knowledge_base_id, safe="")


def version_name(version: int, fingerprint: str) -> str:
    return f"v{version}-{fingerprint}"


def whole_name(name: str) -> str:
    """The name of stored version `name` built in one piece again."""
    return f"{name}-whole"


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


@contextlib.contextmanager
def compaction_lock(root: Path, knowledge_base_id: str) -> Iterator[bool]:
    """Held while one process of the host builds a knowledge base's appended
    snapshot whole again; yields False at once when another process holds it."""
    directory = folder(root, knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".compaction-lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def save_newest_whole(root: Path, knowledge_base_id: str, name: str) -> None:
    """Name `name` (stored) the newest version built whole by a compaction."""
    pointer = folder(root, knowledge_base_id) / f".whole.json.{os.getpid()}.tmp"
    pointer.write_text(json.dumps({"name": name}))
    pointer.rename(folder(root, knowledge_base_id) / "whole.json")


def newest_whole(root: Path, knowledge_base_id: str) -> str:
    """The newest version a compaction built whole ("": none)."""
    try:
        pointer = json.loads(
            (folder(root, knowledge_base_id) / "whole.json").read_text()
        )
        return str(pointer["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def version_of(name: str) -> int:
    """The index version of a stored version's name (`version_name`)."""
    return int(name[1:].split("-", 1)[0])


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


def load(
    root: Path, knowledge_base_id: str, name: str, current: Snapshot | None = None
) -> Snapshot | None:
    """A stored snapshot, its arrays memory-mapped; None when it is not there.
    A version stored as appended rows takes its base from `current` when that
    is at the same base, else from the base's files."""
    directory = folder(root, knowledge_base_id) / name
    try:
        meta = json.loads((directory / "meta.json").read_text())
        base_name = meta.pop("base", "")
        arrays = {
            array: np.load(directory / f"{array}.npy", mmap_mode="r")
            for array in (_APPENDED_ARRAYS if base_name else _ARRAYS)
        }
    except (OSError, ValueError):
        return None
    postings = Postings(*(arrays.pop(part) for part in _POSTINGS))
    ann_rows, ann_uncovered = arrays.pop("ann_rows"), arrays.pop("ann_uncovered")
    approximate = _approximate(
        root, knowledge_base_id, meta.pop("ann_file", ""), ann_rows, ann_uncovered
    )
    arrays["document_ids"] = _uuids(arrays.pop("document_ids"))
    if base_name:
        if current is not None and current.base_name == base_name:
            base = current.base()
        else:
            base = load(root, knowledge_base_id, base_name)
        if base is None:
            return None  # its base was deleted: built again
        appended = _with_appended(base, meta, arrays, postings, approximate)
        appended.stored_as = name
        return appended
    return Snapshot(
        knowledge_base_id=knowledge_base_id,
        postings=postings,
        approximate=approximate,
        base_name=name,
        stored_as=name,
        **meta,
        **arrays,
    )


def _approximate(
    root: Path,
    knowledge_base_id: str,
    ann_file: str,
    ann_rows: np.ndarray,
    ann_uncovered: np.ndarray,
) -> vector_index.Approximate | None:
    if not ann_file:
        return None
    # Gone when a newer index replaced it: the snapshot takes that one up.
    with contextlib.suppress(OSError):
        return vector_index.opened(
            folder(root, knowledge_base_id) / ann_file, ann_rows, ann_uncovered
        )
    return None


def _with_appended(
    base: Snapshot,
    meta: dict,
    arrays: dict[str, np.ndarray],
    postings: Postings,
    approximate: vector_index.Approximate | None,
) -> Snapshot:
    removed = np.asarray(arrays["removed"], dtype=np.int64)
    runs = None
    if base.runs is not None:  # the base's are known: only the new rows' are made
        more, others = document_runs(arrays["document_ids"])
        runs = (
            np.concatenate([base.runs[0], more + base.size]),
            np.concatenate([base.runs[1], others]),
        )
    return Snapshot(
        knowledge_base_id=base.knowledge_base_id,
        version=meta["version"],
        dimension=meta["dimension"],
        stale=meta["stale"],
        chunk_ids=np.concatenate([base.chunk_ids, arrays["chunk_ids"]]),
        document_ids=np.concatenate([base.document_ids, arrays["document_ids"]]),
        ordinals=np.concatenate([base.ordinals, arrays["ordinals"]]),
        lengths=np.concatenate([base.lengths, arrays["lengths"]]),
        folds=np.concatenate([base.folds, arrays["folds"]]),
        matrix=base.matrix,
        postings=base.postings,
        appended_matrix=arrays["matrix"],
        appended_postings=postings,
        removed=removed,
        removed_frequencies=(
            (arrays["removed_in_base"], arrays["removed_in_appended"])
            if len(removed)
            else ()
        ),
        approximate=approximate,
        base_name=base.base_name,
        runs=runs,
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
    its approximate index's file, already stored ("": none). A segmented
    snapshot is written as its appended rows, naming its stored base."""
    directory = folder(root, knowledge_base_id)
    final = directory / name
    if final.exists():
        return
    scratch = directory / f".{name}.{os.getpid()}.tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    arrays = _appended_arrays(snapshot) if snapshot.segmented else _arrays(snapshot)
    for array, value in arrays.items():
        np.save(scratch / f"{array}.npy", np.ascontiguousarray(value))
    meta = {
        "version": snapshot.version,
        "dimension": snapshot.dimension,
        "stale": snapshot.stale,
        "ann_file": ann_file,
    }
    if snapshot.segmented:
        meta["base"] = snapshot.base_name
    (scratch / "meta.json").write_text(json.dumps(meta))
    try:
        scratch.rename(final)
    except OSError:  # another process put it there first
        shutil.rmtree(scratch, ignore_errors=True)


def stored(root: Path, knowledge_base_id: str, name: str) -> bool:
    return (folder(root, knowledge_base_id) / name / "meta.json").exists()


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


def _appended_arrays(snapshot: Snapshot) -> dict[str, np.ndarray]:
    base, empty = snapshot.base_size, np.zeros(0, dtype=np.int32)
    postings = snapshot.appended_postings or Postings()
    matrix = snapshot.appended_matrix
    if matrix is None:
        matrix = np.zeros((0, snapshot.dimension), dtype=np.float32)
    frequencies = snapshot.removed_frequencies or (empty, empty)
    approximate, no_rows = snapshot.approximate, np.zeros(0, dtype=np.int64)
    return {
        "chunk_ids": snapshot.chunk_ids[base:],
        "ordinals": snapshot.ordinals[base:],
        "lengths": snapshot.lengths[base:],
        "folds": snapshot.folds[base:],
        "matrix": matrix,
        "hashes": postings.hashes,
        "starts": postings.starts,
        "rows": postings.rows,
        "counts": postings.counts,
        "document_ids": _uuid_rows(snapshot.document_ids[base:]),
        "ann_rows": approximate.rows if approximate else no_rows,
        "ann_uncovered": approximate.uncovered if approximate else no_rows,
        "removed": snapshot.removed,
        "removed_in_base": frequencies[0],
        "removed_in_appended": frequencies[1],
    }


def prune(root: Path, knowledge_base_id: str, keep: str, keep_file: str) -> None:
    """Delete the knowledge base's other stored versions (not the base of
    `keep`), and the index files (`ann-*`, `vector_index`) other than
    `keep_file` and the newest."""
    base = _base_name(root, knowledge_base_id, keep) or keep
    kept = {keep, base}
    whole = newest_whole(root, knowledge_base_id)
    if whole and version_of(whole) >= version_of(base):
        kept.add(whole)  # what the next publish appends to
    elif whole:  # older than what is kept: never appended to again
        (folder(root, knowledge_base_id) / "whole.json").unlink(missing_ok=True)
    for entry in folder(root, knowledge_base_id).iterdir():
        older = entry.name.startswith("v") and entry.name not in kept
        if (older and entry.is_dir()) or _writer_died(entry):
            shutil.rmtree(entry, ignore_errors=True)
    prune_indexes(root, knowledge_base_id, keep_file)


def _writer_died(scratch: Path) -> bool:
    """Whether the process writing this scratch folder (`save`) is gone: killed
    while it wrote, it left the folder behind."""
    name = scratch.name
    pid = (
        name.rsplit(".", 2)[-2]
        if name.startswith(".v") and name.endswith(".tmp")
        else ""
    )
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def _base_name(root: Path, knowledge_base_id: str, name: str) -> str:
    try:
        meta = json.loads(
            (folder(root, knowledge_base_id) / name / "meta.json").read_text()
        )
    except (OSError, ValueError):
        return ""
    return meta.get("base", "")


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
