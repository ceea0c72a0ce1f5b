"""Search snapshots shared by the processes of a host: restart time and memory.

One knowledge base of published chunks (as `query_latency.py` makes them: CMRC
text, stored vectors and terms). Then, each in a new process as after a server
restart, the first `hybrid-v1` search is timed:

- *cold*: no stored snapshot (the first process of a host after a deploy that
  changed the chunks; it builds the snapshot and stores it);
- *restart*: the stored snapshot is there (any later start: it maps the files);
- *private*: `SEARCH_SNAPSHOT_DIR` empty, each process builds its own in memory.

Memory: four processes each search once and then hold their snapshot; their
proportional set sizes (PSS, `/proc/PID/smaps_rollup`, which splits a shared page
among the processes mapping it) are read while all four are alive, and the growth
each search caused is summed; the same with private snapshots, and one process
alone.

    python bench/snapshot_sharing.py [--sizes 10000 100000] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import time

from common import REPO, markdown_table, median, setup_django, write_section
from query_latency import load_texts_and_questions, populate, publish_to_visible_ms

HOLDER = """
import sys, time
sys.path.insert(0, "bench")
from common import setup_django
setup_django(sys.argv[1], fresh=False)
from django.contrib.auth import get_user_model
from retrieval.embeddings import get_embedder
from retrieval.search import search
from retrieval.tokens import keyword_tokens

def pss():
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024

user = get_user_model().objects.get(username=sys.argv[2])
keyword_tokens("预热 warm up")  # jieba's dictionary: not the snapshot's cost
get_embedder().embed_queries(["warm up"])
before = pss()
started = time.perf_counter()
search(user=user, question=sys.argv[3], profile="hybrid-v1")
print(time.perf_counter() - started, before, flush=True)
sys.stdin.readline()  # hold the snapshot until told to go
"""


PUBLISHER = """
import json, sys
sys.path.insert(0, "bench")
from common import setup_django
setup_django(sys.argv[1], fresh=False)
from django.contrib.auth import get_user_model
from documents.models import KnowledgeBase
from query_latency import load_texts_and_questions, publish_to_visible_ms
from retrieval.search import search
user = get_user_model().objects.get(username=sys.argv[2])
kb = KnowledgeBase.objects.get(pk=sys.argv[3])
texts, questions = load_texts_and_questions()
search(user=user, question=questions[1], profile="hybrid-v1")
samples = [publish_to_visible_ms(kb, user, texts, questions[2]) for _ in range(5)]
print(json.dumps(samples))
"""


def new_process_publishes(database_url: str, user, folder) -> list[float]:
    """Publish-to-visible of the first five publishes a newly started process
    sees (it builds, stores and maps each next version)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            PUBLISHER,
            database_url,
            user.username,
            f"bench-{user.username.split('-')[1]}",
        ],
        cwd=REPO,
        env={**os.environ, "SEARCH_SNAPSHOT_DIR": str(folder)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def start(database_url: str, username: str, question: str, directory: str):
    env = {**os.environ, "SEARCH_SNAPSHOT_DIR": directory}
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, database_url, username, question],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def pss_of(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def run_together(count: int, database_url, username, question, directory):
    """(first-search seconds of each, summed PSS growth) of `count` processes."""
    processes = []
    for _ in range(count):
        process = start(database_url, username, question, directory)
        processes.append(process)
        time.sleep(0.2)  # they start one after another, as gunicorn's workers do
    seconds, growth = [], 0
    readings = [process.stdout.readline().split() for process in processes]
    for process, (taken, before) in zip(processes, readings, strict=True):
        seconds.append(float(taken))
        growth += pss_of(process.pid) - int(before)
    for process in processes:
        process.stdin.write("\n")
        process.stdin.flush()
        process.wait()
    return seconds, growth


def _publish_to_visible(user, texts, questions, folder) -> list[float]:
    """One more published document, seen by the next search of a process that
    maps the stored snapshot (it builds, stores and maps the next version), then
    by another process's first search after it (it maps that version)."""
    from django.conf import settings

    from documents.models import KnowledgeBase
    from retrieval.search import search
    from retrieval.search_backends.snapshots.cache import snapshot_cache

    settings.SEARCH_SNAPSHOT_DIR = str(folder)
    snapshot_cache.clear()
    search(user=user, question=questions[1], profile="hybrid-v1")
    kb = KnowledgeBase.objects.get(pk=f"bench-{user.username.split('-')[1]}")
    samples = [publish_to_visible_ms(kb, user, texts, questions[2]) for _ in range(3)]
    snapshot_cache.clear()
    started = time.perf_counter()
    search(user=user, question=questions[2], profile="hybrid-v1")
    mapped = (time.perf_counter() - started) * 1000
    settings.SEARCH_SNAPSHOT_DIR = ""
    snapshot_cache.clear()
    gc.collect()  # unmap: the memory measured next is the other processes'
    return [median(samples), mapped]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    database_url = setup_django()
    texts, questions = load_texts_and_questions()
    folder = REPO / "var" / "bench" / "snapshots"
    times, memory, visible = [], [], []
    for size in args.sizes:
        _, user = populate(size, texts)
        question = questions[0]
        shutil.rmtree(folder, ignore_errors=True)
        cold = run_together(1, database_url, user.username, question, str(folder))[0]
        restart = [
            run_together(1, database_url, user.username, question, str(folder))[0][0]
            for _ in range(3)
        ]
        private = [
            run_together(1, database_url, user.username, question, "")[0][0]
            for _ in range(3)
        ]
        times.append([size, cold[0], median(restart), median(private)])
        fresh = new_process_publishes(database_url, user, folder)
        visible.append(
            [
                size,
                *_publish_to_visible(user, texts, questions, folder),
                median(fresh),
                max(fresh),
            ]
        )
        one = run_together(1, database_url, user.username, question, str(folder))[1]
        shared = run_together(4, database_url, user.username, question, str(folder))
        alone = run_together(4, database_url, user.username, question, "")
        memory.append(
            [
                size,
                one / 2**20,
                shared[1] / 2**20,
                shared[1] / one,
                alone[1] / 2**20,
                alone[1] / one,
            ]
        )
    body = (
        markdown_table(
            [
                "chunks",
                "first search, cold s",
                "first search after a restart s",
                "first search, private snapshots s",
            ],
            times,
        )
        + "\n\n"
        + markdown_table(
            [
                "chunks",
                "1 process: PSS growth MiB",
                "4 sharing: summed MiB",
                "ratio to 1",
                "4 private: summed MiB",
                "ratio to 1",
            ],
            memory,
        )
        + "\n\n"
        + markdown_table(
            [
                "chunks",
                "publish to visible, the building process ms",
                "then another process's next search ms",
                "a new process's first 5 publishes: median ms",
                "max ms",
            ],
            visible,
        )
        + "\n"
    )
    print(body)
    if not args.no_write:
        write_section(
            "snapshot-sharing",
            "Shared search snapshots: first search after a restart, memory",
            "`python bench/snapshot_sharing.py`: see its docstring. SQLite; each "
            "first search is a new process's (Django set up, jieba and the embedder "
            "loaded), median of 3 except the cold one; PSS growth is what the "
            "process's one `hybrid-v1` search added to its proportional set size.",
            body,
        )


if __name__ == "__main__":
    main()
