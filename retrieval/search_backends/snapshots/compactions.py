"""An appended version built whole again, in the background, once its rows
appended and removed pass SEARCH_APPEND_SHARE: from the snapshot in memory (no
query), stored beside the appended one (`files.whole_name`) and named the newest
(`whole.json`), which the next publish on the host appends to. One process of
the host at a time.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from . import files, refresh
from .snapshot import Snapshot

logger = logging.getLogger(__name__)


def compacted(root: Path, snapshot: Snapshot, name: str) -> Snapshot | None:
    """`snapshot`, stored as `name`, built whole, stored beside it and named
    the newest, mapped; None when another process of the host does or did it."""
    knowledge_base_id = snapshot.knowledge_base_id
    started = time.monotonic()
    held = files.lock(root, knowledge_base_id, "compaction", wait=False)
    if held is None:
        return None  # another process of the host does it
    try:
        with held:
            if not _newer(root, snapshot):
                return None
            whole_name = files.whole_name(name)
            # Written under a scratch name and renamed, without the build
            # lock: the publishes that come meanwhile append as before.
            files.store(
                root,
                knowledge_base_id,
                whole_name,
                refresh.compacted(snapshot),
                replacing=False,
            )
            files.save_newest_whole(root, knowledge_base_id, whole_name)
            whole = files.load(root, knowledge_base_id, whole_name)
    except Exception:
        logger.exception(
            "search snapshot of knowledge base %s not built whole again; "
            "publishes go on appending",
            knowledge_base_id,
        )
        return None
    logger.info(
        "search snapshot built whole again knowledge_base=%s version=%s "
        "chunks=%s seconds=%.2f",
        knowledge_base_id,
        snapshot.version,
        snapshot.searched,
        time.monotonic() - started,
    )
    return whole


def _newer(root: Path, snapshot: Snapshot) -> bool:
    """Whether the host's newest version built whole is not `snapshot`'s."""
    newest = files.newest_whole(root, snapshot.knowledge_base_id)
    # A newer one is from before a database restored from a backup.
    return not newest or files.version_of(newest) != snapshot.version
