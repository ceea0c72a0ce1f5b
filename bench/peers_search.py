"""The search half of `bench/peers.py`: Curator's keyword search against Tantivy's.

Passages: the CMRC 2018 dev contexts of every other article cut into 250-character
pieces (a question's gold passage is the piece holding its answer), and around them
distinct filler from `million_chunks.py`'s generator (three consecutive sentences
and two from elsewhere) over the sentences of the other articles, so that no filler
repeats a gold passage's text.

Curator: chunk rows as ingestion writes them (hashing vector, stored terms of
`retrieval.terms`), one knowledge base, snapshots shared through files as on a
production host; searched through `retrieval.search.search` (visibility, the
index version check, scoring, passage rows), as a user's query pays. Tantivy
(tantivy-py): jieba's search mode (`jieba.cut_for_search`, its documented way to
cut text for a search engine) joined by spaces into a stored text field read by
Tantivy's whitespace tokenizer and lowercase filter, its default BM25; a query is
the question cut the same way, its words OR-ed, and the top 10 documents loaded.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field

import million_chunks
from common import CORPUS, REPO, median, percentile

PIECE = 250
PER_DOCUMENT = 20
TOP_K = 10
SNAPSHOTS = REPO / "var" / "bench" / "peers-snapshots"
TANTIVY_DIR = REPO / "var" / "bench" / "peers-tantivy"
KB_ID = "peers"
_WORDLIKE = re.compile(r"\w")


@dataclass
class Corpus:
    passages: list[str]
    # (question, index of its gold passage), gold passages being the first ones
    questions: list[tuple[str, int]]
    # passage -> (its document, its ordinal there): a paragraph's pieces make one
    # document, the filler twenty a document
    places: list[tuple[int, int]] = field(default_factory=list)
    pieces: int = 0  # how many passages are cut from the questions' contexts


def corpus(size: int) -> Corpus:
    data = json.loads((CORPUS / "retrieval/cmrc2018/cmrc2018_dev.json").read_text())
    articles = data["data"]
    passages: list[str] = []
    places: list[tuple[int, int]] = []
    questions: list[tuple[str, int]] = []
    for article in articles[0::2]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            base = len(passages)
            passages.extend(
                context[i : i + PIECE] for i in range(0, len(context), PIECE)
            )
            places.extend((base, i) for i in range(len(passages) - base))
            for qa in paragraph["qas"]:
                answer = qa["answers"][0]["text"]
                start = context.find(answer)
                if answer and start // PIECE == (start + len(answer) - 1) // PIECE:
                    questions.append((qa["question"], base + start // PIECE))
    filler_text = "".join(
        p["context"] for article in articles[1::2] for p in article["paragraphs"]
    )
    million_chunks.SENTENCES[:] = million_chunks.SENTENCE.findall(filler_text)
    pieces = len(passages)
    seen = set(passages)
    index = filler = 0
    while len(passages) < size:
        text = "".join(
            million_chunks.SENTENCES[i] for i in million_chunks.chunk_sentences(index)
        )
        index += 1
        if text not in seen:
            seen.add(text)
            passages.append(text)
            places.append((size + filler // PER_DOCUMENT, filler % PER_DOCUMENT))
            filler += 1
    if len(seen) != len(passages):
        raise SystemExit("the gold passages repeat one another")
    return Corpus(passages, questions, places, pieces)


# --- Curator ---------------------------------------------------------------


def curator_terms(passages: list[str]) -> list:
    from retrieval.terms import chunk_terms

    return [chunk_terms(text) for text in passages]


def populate(passages: list[str], places: list[tuple[int, int]], terms: list, pool):
    """One knowledge base holding the passages; returns its viewer."""
    from django.contrib.auth import get_user_model

    from documents.models import Document, KnowledgeBase, Membership
    from retrieval.embeddings import get_embedder, to_bytes
    from retrieval.models import Chunk
    from retrieval.terms import TOKENIZER

    kb = KnowledgeBase.objects.create(id=KB_ID, name="peers")
    user = get_user_model().objects.create(username="peers")
    Membership.objects.create(user=user, knowledge_base=kb, role="viewer")
    model = get_embedder().name
    rows: dict[int, Document] = {}
    batch = 5000
    spans = [passages[i : i + batch] for i in range(0, len(passages), batch)]
    for number, vectors in enumerate(pool.imap(_vectors, spans)):
        start = number * batch
        chunks, new = [], []
        for offset, vector in enumerate(vectors):
            index = start + offset
            key, ordinal = places[index]
            document = rows.get(key)
            if document is None:
                document = rows[key] = Document(
                    id=uuid.uuid4(),
                    knowledge_base=kb,
                    filename=f"doc-{key}.md",
                    content_type="text/markdown",
                    size_bytes=1,
                    sha256="0" * 64,
                    storage_key="bench",
                    status="published",
                )
                new.append(document)
            text = passages[index]
            chunks.append(
                Chunk(
                    document=document,
                    knowledge_base=kb,
                    ordinal=ordinal,
                    text=text,
                    heading_path=[],
                    char_start=0,
                    char_end=len(text),
                    embedding=to_bytes(vector),
                    embedding_model=model,
                    terms=terms[index].terms,
                    term_count=terms[index].length,
                    folds=terms[index].folds,
                    tokenizer=TOKENIZER,
                )
            )
        Document.objects.bulk_create(new)
        Chunk.objects.bulk_create(chunks, batch_size=1000)
        print(f"  {start + len(vectors):,} chunks written", file=sys.stderr, flush=True)
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=1)
    return user


def _vectors(texts: list[str]):
    from retrieval.embeddings import get_embedder

    return get_embedder().embed(texts)


def curator_snapshot_build() -> tuple[float, float]:
    """The cold build of the stored snapshot, as the first query after a
    publish pays it: (wall-clock, CPU) seconds."""
    from retrieval.search_backends.snapshots.cache import snapshot_cache

    shutil.rmtree(SNAPSHOTS / KB_ID, ignore_errors=True)
    snapshot_cache.clear()
    with Clock() as clock:
        snapshot_cache.snapshots([KB_ID])
        snapshot_cache.wait_for("index")
    return clock.seconds


class Clock:
    """Wall-clock and CPU seconds of a block (the CPU of every thread of this
    process: Tantivy's writer threads count)."""

    def __enter__(self) -> Clock:
        self.started = (time.perf_counter(), time.process_time())
        return self

    def __exit__(self, *exc) -> None:
        wall, cpu = self.started
        self.seconds = (time.perf_counter() - wall, time.process_time() - cpu)


def chunk_passages() -> dict[int, int]:
    """chunk id -> passage index (chunks were written in passage order)."""
    from retrieval.models import Chunk

    ids = Chunk.objects.filter(knowledge_base_id=KB_ID).order_by("pk")
    return {pk: index for index, pk in enumerate(ids.values_list("pk", flat=True))}


def curator_search(user, question: str, profile: str) -> list[int]:
    """The chunk ids of the ranking, best first (before passages are joined)."""
    from retrieval.search import RERANK_DEPTH, search

    run = search(user=user, question=question, profile=profile, top_k=TOP_K)
    if profile == "keyword":
        return [hit.chunk_id for hit in run.keyword]
    return [hit.chunk_id for hit in run.reranked + run.fused[RERANK_DEPTH:]]


# --- Tantivy ---------------------------------------------------------------


def jieba_words(text: str) -> list[str]:
    from retrieval.tokens import segmenter

    return [w for w in segmenter().cut_for_search(text) if _WORDLIKE.search(w)]


class Tantivy:
    def __init__(self) -> None:
        import tantivy

        self.tantivy = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_unsigned_field("id", stored=True)
        builder.add_text_field("text", stored=True, tokenizer_name="jieba_words")
        self.schema = builder.build()
        shutil.rmtree(TANTIVY_DIR, ignore_errors=True)
        TANTIVY_DIR.mkdir(parents=True)
        self.index = tantivy.Index(self.schema, path=str(TANTIVY_DIR))
        analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
            .filter(tantivy.Filter.lowercase())
            .build()
        )
        self.index.register_tokenizer("jieba_words", analyzer)
        self.searcher = None

    def build(self, words: list[list[str]]) -> None:
        writer = self.index.writer()  # its defaults: 128 MB, a thread per core
        for number, passage in enumerate(words):
            writer.add_document(
                self.tantivy.Document(id=number, text=" ".join(passage))
            )
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, question: str) -> list[int]:
        tantivy = self.tantivy
        terms = dict.fromkeys(word.lower() for word in jieba_words(question))
        query = tantivy.Query.boolean_query(
            [
                (
                    tantivy.Occur.Should,
                    tantivy.Query.term_query(self.schema, "text", term),
                )
                for term in terms
            ]
        )
        found = self.searcher.search(query, TOP_K).hits
        documents = [self.searcher.doc(address) for _, address in found]
        return [document["id"][0] for document in documents]


# --- rounds ----------------------------------------------------------------


def build_round(passages: list[str], curator_first: bool, snapshot: bool) -> dict:
    """Both builds from the passages' text, in the round's order: Curator's
    `chunk_terms` per passage (what ingestion stores) then, with `snapshot`, the
    cold snapshot build from the chunk rows; jieba's search mode per passage then
    Tantivy's indexing and commit. Each step: (wall-clock, CPU) seconds."""
    result: dict = {}

    def curator() -> None:
        with Clock() as clock:
            result["terms"] = curator_terms(passages)
        result["curator_terms_s"] = clock.seconds
        if snapshot:
            result["curator_index_s"] = curator_snapshot_build()

    def peer() -> None:
        with Clock() as clock:
            words = [jieba_words(text) for text in passages]
        result["tantivy_words_s"] = clock.seconds
        engine = Tantivy()
        with Clock() as clock:
            engine.build(words)
        result["tantivy_index_s"] = clock.seconds
        result["tantivy"] = engine

    for step in (curator, peer) if curator_first else (peer, curator):
        step()
    return result


def latency_round(user, engine: Tantivy, questions: list[str]) -> dict[str, list]:
    """Every question through each, one system after the other; milliseconds."""
    samples: dict[str, list] = {"keyword": [], "tantivy": [], "hybrid": []}
    for name, call in (
        ("keyword", lambda q: curator_search(user, q, "keyword")),
        ("tantivy", engine.search),
        ("hybrid", lambda q: curator_search(user, q, "hybrid-v1")),
    ):
        call(questions[0])  # warm
        for question in questions:
            started = time.perf_counter()
            call(question)
            samples[name].append((time.perf_counter() - started) * 1000)
    return samples


def recall_at(found: list[int], gold: int, depth: int = 5) -> bool:
    return gold in found[:depth]


def summary(samples: list[dict[str, list]]) -> dict:
    """Medians over rounds of each round's p50/p95, and of the ratios taken
    within a round."""

    def per_round(name: str, fraction: float) -> list[float]:
        return [percentile(s[name], fraction) for s in samples]

    out = {}
    for name in ("keyword", "tantivy", "hybrid"):
        out[f"{name}_p50_ms"] = median(per_round(name, 0.5))
        out[f"{name}_p95_ms"] = median(per_round(name, 0.95))
    for fraction, label in ((0.5, "p50"), (0.95, "p95")):
        ratios = [
            a / b
            for a, b in zip(
                per_round("keyword", fraction),
                per_round("tantivy", fraction),
                strict=True,
            )
        ]
        out[f"keyword_{label}_ratio_to_tantivy"] = median(ratios)
    return out
