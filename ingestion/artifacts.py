"""Stage outputs kept in the object storage the originals use, between attempts.

    artifacts/<document id>/<stage>-v<FORMAT_VERSION>-<key digest>[-p<page>].bin

The key digest covers the format version, the stage, the document's content
(sha256) and what produced the output (parser code and library versions, OCR
engine, embedder), so an artifact is only ever read by a run that would have made
the same one. A file holds `[FORMAT_VERSION, sha256 of the payload, payload]` in
msgpack: a file cut short by a kill, damaged or of another format fails the check
and is read as missing (the stage runs again), never as a failure. Storage has no
rename, so the digest is what makes a write atomic for readers.

Artifacts are working state: the pipeline deletes a document's on success, the
cancel service on cancel, a receiver when the document row is deleted, and
`prune_ingestion_tasks` those of documents with no task that could resume
(`orphan_artifacts_prune`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import uuid
from functools import partial

import msgpack
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Exists, OuterRef

from documents.models import Document

from .models import IngestionTask, TaskStatus

logger = logging.getLogger(__name__)

ROOT = "artifacts"
FORMAT_VERSION = 1
# A failed task keeps its artifacts: a person may retry it.
RESUMABLE_STATUSES = (
    TaskStatus.QUEUED,
    TaskStatus.RUNNING,
    TaskStatus.RETRY_WAIT,
    TaskStatus.FAILED,
)


def artifact_name(
    document_id: uuid.UUID | str, stage: str, key: object, page: int | None = None
) -> str:
    """The storage name of one artifact; `key` is any JSON-able description of
    the input and the producer (the document's sha256 among them)."""
    digest = hashlib.sha256(
        json.dumps([FORMAT_VERSION, stage, key], sort_keys=True).encode()
    ).hexdigest()[:24]
    suffix = "" if page is None else f"-p{page:05d}"
    return f"{ROOT}/{document_id}/{stage}-v{FORMAT_VERSION}-{digest}{suffix}.bin"


def artifact_pages(document_id: uuid.UUID | str, stage: str, key: object) -> list[int]:
    """The page numbers stored for (`stage`, `key`), found by listing."""
    prefix = artifact_name(document_id, stage, key, page=0).removesuffix("00000.bin")
    folder, start = prefix.rsplit("/", 1)
    try:
        _, files = default_storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    numbers = (name[len(start) : -len(".bin")] for name in files)
    return sorted(
        int(number)
        for name, number in zip(files, numbers, strict=True)
        if name.startswith(start) and name.endswith(".bin") and number.isdigit()
    )


def artifact_read(name: str) -> object | None:
    """The payload stored under `name`, or None when it is missing or fails its
    check (a damaged file is deleted, so the stage writes it again)."""
    try:
        with default_storage.open(name, "rb") as stored:
            data = stored.read()
    except FileNotFoundError:
        return None
    except Exception as error:  # an unreachable store: the stage runs again
        logger.warning("artifact not read name=%s (%s)", name, type(error).__name__)
        return None
    try:
        version, digest, payload = msgpack.unpackb(data, raw=False)
        if version != FORMAT_VERSION or hashlib.sha256(payload).hexdigest() != digest:
            raise ValueError("digest")
        return msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as error:
        logger.warning(
            "artifact ignored name=%s (%s): computed again", name, type(error).__name__
        )
        with contextlib.suppress(Exception):
            default_storage.delete(name)
        return None


def artifact_write(name: str, value: object) -> bool:
    """Store `value` (msgpack data) under `name`; whether it was stored. A failure
    is logged, not raised: without its artifact a stage only runs again."""
    try:
        payload = msgpack.packb(value, use_bin_type=True)
        data = msgpack.packb(
            [FORMAT_VERSION, hashlib.sha256(payload).hexdigest(), payload],
            use_bin_type=True,
        )
        with contextlib.suppress(FileNotFoundError):
            default_storage.delete(name)  # a damaged one, or the same again
        saved = default_storage.save(name, ContentFile(data))
        if saved != name:  # another attempt wrote it meanwhile: the same output
            default_storage.delete(saved)
    except Exception as error:
        logger.warning("artifact not written name=%s (%s)", name, type(error).__name__)
        return False
    return True


def artifacts_delete(*, document_id: uuid.UUID | str) -> int:
    """Delete every artifact of one document; return how many files went."""
    folder = f"{ROOT}/{document_id}"
    try:
        _, files = default_storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    deleted = 0
    for filename in files:
        with contextlib.suppress(FileNotFoundError):
            default_storage.delete(f"{folder}/{filename}")
            deleted += 1
    _remove_empty_folder(folder)
    return deleted


def artifacts_discard(*, document_id: uuid.UUID | str) -> None:
    """`artifacts_delete` for callers that must not fail on it (after a commit, or
    a success): a failure is logged, and pruning finds what is left."""
    try:
        artifacts_delete(document_id=document_id)
    except Exception as error:
        logger.warning(
            "artifacts not deleted document=%s (%s)", document_id, type(error).__name__
        )


def document_deleted(sender: type, instance: Document, **kwargs: object) -> None:
    """`post_delete` of a document: its artifacts go once the deletion commits."""
    transaction.on_commit(partial(artifacts_discard, document_id=instance.pk))


def orphan_artifacts_prune() -> int:
    """Delete the artifacts of documents that are gone or whose latest task can
    no longer resume (succeeded, cancelled, or none); return the files deleted."""
    try:
        folders, _ = default_storage.listdir(ROOT)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    ids = []
    for folder in folders:
        with contextlib.suppress(ValueError):
            ids.append(uuid.UUID(folder))
    resumable = IngestionTask.objects.filter(
        document_id=OuterRef("pk"), status__in=RESUMABLE_STATUSES
    )
    kept = {
        str(pk)
        for pk in Document.objects.filter(pk__in=ids)
        .filter(Exists(resumable))
        .values_list("pk", flat=True)
    }
    return sum(
        artifacts_delete(document_id=folder) for folder in folders if folder not in kept
    )


def _remove_empty_folder(folder: str) -> None:
    # Object stores have no folders; a file system keeps an empty one otherwise.
    with contextlib.suppress(NotImplementedError, OSError):
        os.rmdir(default_storage.path(folder))
