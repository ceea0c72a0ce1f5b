"""hybrid-v1's vector weight, swept: one ingestion, every question at every weight.

`evaluate_retrieval` ingests a data set through the real path for each run, which
takes minutes with a semantic embedder; this ingests it once (its `Evaluator`, the
same scratch knowledge base and scoring), asks every question with `keyword` and
`vector`, then with `hybrid-v1` at each vector weight (`RETRIEVAL_VECTOR_WEIGHT`),
and prints recall@1/5/10 and MRR@10 per weight. Each question is embedded once:
the `vector` pass times it, the sweep reuses its vector. The embedder is the one
`EMBEDDING_PROVIDER` names (`--embedder`). Prints a table (and JSON with --json);
docs/retrieval-quality.md holds the results.

    python bench/vector_weight.py --dataset PATH --embedder e5-small \
        [--database-url sqlite:////tmp/embed-eval.sqlite3] [--weights 0 0.2 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import cache
from pathlib import Path

from common import setup_django

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--embedder", default="hashing", help="EMBEDDING_PROVIDER")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--weights", type=float, nargs="+", default=list(WEIGHTS))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--reuse",
        metavar="KB_ID",
        help="ask the questions of a knowledge base this script (or evaluate_retrieval "
        "--keep) ingested before, instead of ingesting",
    )
    parser.add_argument("--keep", action="store_true", help="keep the knowledge base")
    args = parser.parse_args()
    os.environ["EMBEDDING_PROVIDER"] = args.embedder
    setup_django(args.database_url)

    from django.test.utils import override_settings

    from retrieval.embeddings import get_embedder
    from workbench.evaluation.datasets import load_dataset
    from workbench.evaluation.search_quality import Evaluator

    dataset = load_dataset(args.dataset, "auto").limited(args.limit)
    embedder = get_embedder()
    write = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    evaluator = Evaluator(dataset, write=write)
    rows = []
    try:
        started = time.perf_counter()
        if args.reuse:
            reuse(evaluator, args.reuse, dataset)
        else:
            evaluator.scratch.ingest(dataset.passages)
        write(
            f"ingested {len(dataset.passages)} passages, "
            f"{evaluator.scratch.chunk_count()} chunks with {embedder.name} in "
            f"{time.perf_counter() - started:.0f} s"
        )
        # Each question embedded once, in the `vector` pass (timed there): the
        # weights change the fusion only.
        embed_one = cache(embedder.embed_queries.__func__.__get__(embedder))
        embedder.embed_queries = lambda texts: embed_one(tuple(texts))
        for profile in ("keyword", "vector"):
            rows.append(evaluator.evaluate(profile).row())
        for weight in args.weights:
            with override_settings(RETRIEVAL_VECTOR_WEIGHT=weight):
                row = evaluator.evaluate("hybrid-v1").row()
            rows.append({**row, "profile": f"hybrid-v1 vector={weight:g}"})
    finally:
        if args.keep:
            write(f"kept knowledge base {evaluator.knowledge_base_id}")
        else:
            evaluator.scratch.clean_up()
    if args.json:
        print(
            json.dumps(
                {"dataset": dataset.name, "embedder": embedder.name, "rows": rows},
                indent=1,
            )
        )
        return
    print(f"{dataset.name}, {embedder.name}")
    print("| profile | recall@1 | recall@5 | recall@10 | MRR@10 |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['profile']} | {row['recall@1']:.4f} | {row['recall@5']:.4f} "
            f"| {row['recall@10']:.4f} | {row['MRR@10']:.4f} |"
        )


def reuse(evaluator, knowledge_base_id: str, dataset) -> None:
    """Point `evaluator` at the knowledge base an earlier run left (its documents
    are named by the passages' file names)."""
    from django.contrib.auth import get_user_model

    from documents.models import Document

    users = get_user_model().objects
    scratch = evaluator.scratch
    scratch.id = evaluator.knowledge_base_id = knowledge_base_id
    scratch.user = users.get(username=knowledge_base_id)
    scratch.editor = users.get(username=f"{knowledge_base_id}-editor")
    by_name = dict(
        Document.objects.filter(knowledge_base_id=knowledge_base_id).values_list(
            "filename", "pk"
        )
    )
    evaluator.documents.update(
        {passage.key: by_name[passage.filename] for passage in dataset.passages}
    )


if __name__ == "__main__":
    main()
