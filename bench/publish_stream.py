"""Publishes back to back into one knowledge base, as two processes of a host see them.

One knowledge base of `--size` published chunks (made as `query_latency.py` makes
them), snapshots shared through `SEARCH_SNAPSHOT_DIR`. This process and a second
one (the watcher, another web process of the host) have searched it once. Then
`--publishes` times, back to back: a new version of a document replaces an older
one (its 20 chunks written as ingestion writes them, the old version archived,
the index version moved), and at once both processes search; each search's time
is that publish's time to visible in that process (the search brings its
snapshot to the new version, whichever process stores it).

Each round runs once per `SEARCH_APPEND_SHARE` of `--shares`, in turned order:
the default (a publish appends to the snapshot and stores its rows; at 100,000
chunks these publishes stay far below the share), a share the snapshot passes
a dozen publishes in (it is then built whole again in the background while
publishes go on appending), and 0 (every publish builds the whole version again
and stores it, as before appending).

    python bench/publish_stream.py [--size 100000] [--publishes 40] [--rounds 2]
        [--shares 0.1 0.005 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

from common import REPO, markdown_table, median, setup_django, write_section
from query_latency import load_texts_and_questions, populate, publish_one

WATCHER = """
import sys, time
sys.path.insert(0, "bench")
from common import setup_django
setup_django(sys.argv[1], fresh=False)
from django.contrib.auth import get_user_model
from retrieval.search import search
user = get_user_model().objects.get(username=sys.argv[2])
for line in sys.stdin:
    started = time.perf_counter()
    search(user=user, question=sys.argv[3], profile="hybrid-v1")
    print((time.perf_counter() - started) * 1000, flush=True)
"""


def stream(user, kb, texts, question, share: str, folder, count: int):
    """(this process's ms, the watcher's ms) of each of `count` publishes, and
    how many versions were built whole in the background meanwhile."""
    from django.conf import settings

    from documents.models import Document
    from retrieval.search import search
    from retrieval.search_backends.snapshots import files
    from retrieval.search_backends.snapshots.cache import snapshot_cache

    shutil.rmtree(folder, ignore_errors=True)
    settings.SEARCH_SNAPSHOT_DIR = str(folder)
    settings.SEARCH_APPEND_SHARE = float(share)
    snapshot_cache.clear()
    search(user=user, question=question, profile="hybrid-v1")
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WATCHER,
            os.environ["DATABASE_URL"],
            user.username,
            question,
        ],
        cwd=REPO,
        env={
            **os.environ,
            "SEARCH_SNAPSHOT_DIR": str(folder),
            "SEARCH_APPEND_SHARE": share,
        },
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    watcher.stdin.write("\n")  # its first search maps the stored version
    watcher.stdin.flush()
    watcher.stdout.readline()
    ours, theirs, wholes = [], [], set()
    for _ in range(count):
        oldest = (
            Document.objects.filter(knowledge_base=kb, status="published")
            .order_by("created_at", "id")
            .values_list("id", flat=True)
            .first()
        )
        Document.objects.filter(pk=oldest).update(status="archived")
        publish_one(kb, texts)
        watcher.stdin.write("\n")
        watcher.stdin.flush()
        started = time.perf_counter()
        search(user=user, question=question, profile="hybrid-v1")
        ours.append((time.perf_counter() - started) * 1000)
        theirs.append(float(watcher.stdout.readline()))
        wholes.add(files.newest_whole(folder, kb.pk))
    snapshot_cache.wait_for("save")
    snapshot_cache.wait_for("compaction")
    wholes.add(files.newest_whole(folder, kb.pk))
    watcher.stdin.close()
    watcher.wait()  # a compaction of its own under way dies with it
    return ours, theirs, len(wholes - {""})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--publishes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--shares", nargs="*", default=["0.1", "0.005", "0"])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    setup_django()
    texts, questions = load_texts_and_questions()
    kb, user = populate(args.size, texts)
    folder = REPO / "var" / "bench" / "snapshots"
    rows = []
    for round_number in range(args.rounds):
        shares = args.shares if round_number % 2 == 0 else args.shares[::-1]
        for share in shares:
            ours, theirs, wholes = stream(
                user, kb, texts, questions[2], share, folder, args.publishes
            )
            rows.append(
                [
                    round_number + 1,
                    share,
                    median(ours),
                    max(ours),
                    median(theirs),
                    max(theirs),
                    sum(max(a, b) > 1000 for a, b in zip(ours, theirs, strict=True)),
                    wholes,
                    ", ".join(
                        f"{a:.0f}/{b:.0f}" for a, b in zip(ours, theirs, strict=True)
                    ),
                ]
            )
            print(rows[-1], flush=True)
    body = markdown_table(
        [
            "round",
            "SEARCH_APPEND_SHARE",
            "this process: median ms",
            "max ms",
            "the watcher: median ms",
            "max ms",
            "publishes over 1 s",
            "versions built whole in the background",
            "each publish: this / the watcher ms",
        ],
        rows,
    )
    print(body)
    if not args.no_write:
        write_section(
            "publish-stream",
            f"Publishes back to back into {args.size:,} chunks",
            "`python bench/publish_stream.py`: see its docstring. SQLite; "
            f"{args.publishes} publishes per run, each a new version replacing "
            "an older one (20 chunks in, 20 out); both processes search at once "
            "after each publish.",
            body,
        )


if __name__ == "__main__":
    main()
