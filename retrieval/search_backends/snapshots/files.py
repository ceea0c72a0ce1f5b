"""Search snapshots as files that the processes of one host share and map read-only.

    <root>/<knowledge base>/v<index_version>-<fingerprint>/   one stored version
        meta.json, *.npy     every row, or (meta "base") the rows appended
                             since its base and the rows removed
    .../v...-whole/          an appended version built whole (whole.json: newest)
    .../ann-<id>.usearch     an approximate index, ann-<id>.keys.npy its chunks
                             (ann.json: newest)
    .../.lock .index-lock .compaction-lock   the host's locks (`lock`)

Every file and folder is written under a scratch name and renamed into place,
so a reader never sees half of one; `prune` deletes what a newer version
replaced, and what a killed writer left. No Django here: `cache` decides when.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

import numpy as np

from . import vector_index
from .bm25 import Postings
from .snapshot import ROW_FIELDS, Snapshot

# np.load parses each header with ast.literal_eval, and CPython 3.11 (fixed in a
# later 3.11 release) can fail two threads compiling at once with "AST constructor
# recursion depth mismatch": a background load and a search's load take turns.
_HEADERS = threading.Lock()

_POSTINGS = ("hashes", "starts", "rows", "counts")
_ARRAYS = (*ROW_FIELDS, "matrix", *_POSTINGS, "ann_rows", "ann_uncovered")
_APPENDED_ARRAYS = (*_ARRAYS, "removed")


def folder(root: Path, knowledge_base_id: str) -> Path:
    return root / quote(knowledge_base_id, safe="")


def version_name(version: int, fingerprint: str) -> str:
    return f"v{version}-{fingerprint}"


def whole_name(name: str) -> str:
    """The name of stored version `name` built in one piece again."""
    return f"{name}-whole"


def version_of(name: str) -> int:
    """The index version of a stored version's name (`version_name`)."""
    return int(name[1:].split("-", 1)[0])


def lock(
    root: Path, knowledge_base_id: str, kind: str = "build", *, wait: bool = True
) -> BinaryIO | None:
    """The host's lock of a knowledge base: "build" (its versions are written
    one at a time), "index" or "compaction" (one process builds it), held until
    the file returned is closed (the system closes it when its holder dies);
    None at once, unless `wait`, when another holder has it."""
    directory = folder(root, knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    name = ".lock" if kind == "build" else f".{kind}-lock"
    handle = open(directory / name, "a+b")  # noqa: SIM115 - the caller closes it
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _write_json(directory: Path, name: str, data: dict) -> None:
    """`name` in `directory` replaced whole (written aside, renamed)."""
    scratch = directory / f".{name}.{os.getpid()}.tmp"
    scratch.write_text(json.dumps(data))
    scratch.rename(directory / name)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_newest_whole(root: Path, knowledge_base_id: str, name: str) -> None:
    """Name `name` (stored) the newest version built whole by a compaction."""
    _write_json(folder(root, knowledge_base_id), "whole.json", {"name": name})


def newest_whole(root: Path, knowledge_base_id: str) -> str:
    """The newest version a compaction built whole ("": none)."""
    return str(
        _read_json(folder(root, knowledge_base_id) / "whole.json").get("name", "")
    )


def remove_index_leftovers(root: Path, knowledge_base_id: str) -> None:
    """Delete the scratch files of index builds that died writing them. Only the
    holder of the index lock writes them: call it holding that lock."""
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
    _write_json(directory, "ann.json", {"file": file, "made_by": made_by})


def newest_index(root: Path, knowledge_base_id: str) -> tuple[str, np.ndarray, str]:
    """The file of the knowledge base's newest index, its keys' chunk ids
    (memory-mapped) and what made its vectors; ("", empty, "") when none."""
    directory = folder(root, knowledge_base_id)
    pointer = _read_json(directory / "ann.json")
    try:
        file = str(pointer["file"])
        keys = np.load(directory / f"{file.split('.')[0]}.keys.npy", mmap_mode="r")
    except (OSError, ValueError, KeyError):
        return "", np.zeros(0, dtype=np.int64), ""
    return file, keys, pointer.get("made_by", "")


def load(
    root: Path, knowledge_base_id: str, name: str, current: Snapshot | None = None
) -> Snapshot | None:
    """A stored snapshot, its arrays memory-mapped; None when it is not there.
    A version stored as appended rows takes its base from `current` when that
    is at the same base, else from the base's files."""
    directory = folder(root, knowledge_base_id) / name
    meta = _read_json(directory / "meta.json")
    if not meta:
        return None
    base_name = meta.pop("base", "")
    try:
        # Plain arrays over the mapping: an element or a slice of an np.memmap
        # costs a Python call, and a query takes thousands.
        with _HEADERS:
            arrays = {
                array: np.load(directory / f"{array}.npy", mmap_mode="r").view(
                    np.ndarray
                )
                for array in (_APPENDED_ARRAYS if base_name else _ARRAYS)
            }
    except (OSError, ValueError):
        return None
    postings = Postings(*(arrays.pop(part) for part in _POSTINGS))
    ann_rows, ann_uncovered = arrays.pop("ann_rows"), arrays.pop("ann_uncovered")
    approximate, ann_file = None, meta.pop("ann_file", "")
    with contextlib.suppress(OSError):  # gone: the snapshot takes up the newest
        if ann_file:
            path = folder(root, knowledge_base_id) / ann_file
            approximate = vector_index.opened(path, ann_rows, ann_uncovered)
    # Stored before as 16 bytes per row in two dimensions: read the same.
    arrays["document_ids"] = arrays["document_ids"].view("V16").reshape(-1)
    if not base_name:
        return Snapshot(
            knowledge_base_id=knowledge_base_id,
            postings=postings,
            approximate=approximate,
            base_name=name,
            **meta,
            **arrays,
        )
    if current is not None and current.base_name == base_name:
        base = current.base()
    else:
        base = load(root, knowledge_base_id, base_name)
    if base is None:
        return None  # its base was deleted: built again
    return Snapshot(
        knowledge_base_id=knowledge_base_id,
        version=meta["version"],
        dimension=meta["dimension"],
        stale=meta["stale"],
        **{
            name: np.concatenate([getattr(base, name), arrays[name]])
            for name in ROW_FIELDS
        },
        matrix=base.matrix,
        postings=base.postings,
        appended_matrix=arrays["matrix"],
        appended_postings=postings,
        removed=np.asarray(arrays["removed"], dtype=np.int64),
        approximate=approximate,
        base_name=base.base_name,
    )


def store(
    root: Path,
    knowledge_base_id: str,
    name: str,
    snapshot: Snapshot,
    *,
    replacing: bool = True,
) -> None:
    """Write `snapshot` with its approximate index as version `name`, atomically
    (a segmented one as its appended rows, naming its stored base) and, when
    `replacing`, delete the versions and index files it replaces."""
    directory = folder(root, knowledge_base_id)
    approximate = snapshot.approximate
    ann_file = vector_index.store(approximate, directory) if approximate else ""
    final, scratch = directory / name, directory / f".{name}.{os.getpid()}.tmp"
    if not final.exists():
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
        if snapshot.segmented:
            meta["base"] = snapshot.base_name
        (scratch / "meta.json").write_text(json.dumps(meta))
        try:
            scratch.rename(final)
        except OSError:  # another process put it there first
            shutil.rmtree(scratch, ignore_errors=True)
    if replacing:
        prune(root, knowledge_base_id, keep=name, keep_file=ann_file)


def stored(root: Path, knowledge_base_id: str, name: str) -> bool:
    return (folder(root, knowledge_base_id) / name / "meta.json").exists()


def _arrays(snapshot: Snapshot) -> dict[str, np.ndarray]:
    """What `store` writes: every row's, or once segmented the rows appended
    since the base and the rows removed."""
    segmented = snapshot.segmented
    first = snapshot.base_size if segmented else 0
    postings, matrix = snapshot.postings, snapshot.matrix
    if segmented:
        postings = snapshot.appended_postings or Postings()
        matrix = snapshot.appended_matrix
        if matrix is None:
            matrix = np.zeros((0, snapshot.dimension), dtype=np.float32)
    approximate, none = snapshot.approximate, np.zeros(0, dtype=np.int64)
    arrays = {
        **{name: getattr(snapshot, name)[first:] for name in ROW_FIELDS},
        "matrix": matrix,
        "hashes": postings.hashes,
        "starts": postings.starts,
        "rows": postings.rows,
        "counts": postings.counts,
        "ann_rows": approximate.rows if approximate else none,
        "ann_uncovered": approximate.uncovered if approximate else none,
    }
    if segmented:
        arrays["removed"] = snapshot.removed
    return arrays


def prune(root: Path, knowledge_base_id: str, keep: str, keep_file: str) -> None:
    """Delete the knowledge base's other stored versions (not the base of
    `keep`), and the index files (`ann-*`, `vector_index`) other than
    `keep_file` and the newest."""
    meta = _read_json(folder(root, knowledge_base_id) / keep / "meta.json")
    base = str(meta.get("base", "")) or keep
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
    """Whether the process writing this scratch folder (`store`) is gone: killed
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
