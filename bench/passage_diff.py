"""How long the reviewer's passage diff takes at its cap (5,000 passages a side).

Passages are built from the demo documents' sentences (English and Chinese), four
random sentences each, numbered so that every passage is distinct. Measured, with
`review.passage_diff.diff_passages` alone (no database):

- *typical*: a new version with 25 passages edited and 5 inserted;
- *rewrite*: two unrelated versions, so every passage is a pairing candidate (the
  worst case for pairing).

    python bench/passage_diff.py [--rounds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

from common import REPO, markdown_table, median, write_section

sys.path.insert(0, str(REPO))

from review.passage_diff import Passage, diff_passages

DEMO = REPO / "workbench" / "demo"
PASSAGES = 5000
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


def sentences(paths: list[Path]) -> list[str]:
    text = " ".join(
        line
        for path in paths
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    return [s.strip() for s in SENTENCE_END.split(text) if len(s.strip()) > 5]


def version(pool: list[str], rng: random.Random) -> list[Passage]:
    return [
        Passage(f"{number}. " + " ".join(rng.choices(pool, k=4)), ("Section",), number)
        for number in range(PASSAGES)
    ]


def edited(passages: list[Passage], rng: random.Random, pool) -> list[Passage]:
    new = list(passages)
    for index in rng.sample(range(len(new)), 25):
        words = new[index].text.split(" ")
        words[rng.randrange(1, len(words))] = rng.choice(pool).split(" ")[0]
        new[index] = Passage(" ".join(words), ("Section",), index)
    for index in sorted(rng.sample(range(len(new)), 5), reverse=True):
        new.insert(index, Passage(" ".join(rng.choices(pool, k=4))))
    return new


def timed(old, new, rounds: int) -> tuple[float, object]:
    runs, diff = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        diff = diff_passages(old, new)
        runs.append(time.perf_counter() - started)
    return median(runs), diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per case")
    parser.add_argument("--no-write", action="store_true", help="only print")
    args = parser.parse_args()
    rng = random.Random(16)
    languages = {
        "English": sentences(sorted(DEMO.glob("[a-z]*.md"))),
        "Chinese": sentences(sorted(DEMO.glob("[!a-z]*.md"))),
    }
    rows = []
    for language, pool in languages.items():
        old = version(pool, rng)
        cases = {"typical": edited(old, rng, pool), "rewrite": version(pool, rng)}
        for case, new in cases.items():
            seconds, diff = timed(old, new, args.rounds)
            counts = f"+{diff.added} −{diff.removed} ~{diff.changed}"
            rows.append([language, case, PASSAGES, counts, seconds * 1000])
    body = markdown_table(
        ["language", "case", "passages a side", "result", "ms (median)"], rows
    )
    print(body)
    if not args.no_write:
        write_section(
            "passage-diff",
            "Passage diff for reviewers",
            "`python bench/passage_diff.py`: `diff_passages` alone on 5,000 passages "
            "a side (the cap of `review/changes.py`), each four random sentences "
            "of the demo documents; *typical* edits a word in 25 passages and "
            "inserts 5, *rewrite* compares two unrelated versions, where every "
            "passage is a pairing candidate (the sentence pool is small, so some "
            "unrelated passages share half their word pairs and are paired as "
            f"changed). Median of {args.rounds} runs.",
            body,
        )


if __name__ == "__main__":
    main()
