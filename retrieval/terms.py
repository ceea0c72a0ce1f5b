"""A chunk's BM25 terms, computed once at ingestion and stored with the chunk.

Tokenizing would be most of a search snapshot's build (jieba over every published
chunk, in every process, after every start), so everything the snapshot needs that
depends on the chunk alone is computed when the chunk is made, beside its vector:

- `terms`: the chunk's distinct `keyword_tokens` as 64-bit hashes, sorted, then
  how often each occurs (uint16), little-endian: 10 bytes a term;
- `length`: how many tokens it has (BM25's document length);
- `folds`: whether its text changes in simplified script (the rerank's shortcut).

A snapshot then concatenates arrays instead of tokenizing text. Terms are found by
hash, so a snapshot keeps no dictionary of strings: a query hashes its few tokens
the same way. `TOKENIZER` names the tokenizer and the hash; a chunk stored under
another name is tokenized again when a snapshot reads it, and
`manage.py reindex_chunks` rewrites such rows.

No Django here: the parser processes compute these beside the vectors.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .tokens import folds, keyword_tokens, segmenter

# Changes whenever `keyword_tokens`, `term_hash` or what is tokenized (a chunk's
# headings and text) would give another result.
TOKENIZER = "kw2-blake2b64"
_MAX_COUNT = 65535
_ENTRY_BYTES = 10  # an int64 hash and a uint16 count


@dataclass(frozen=True)
class ChunkTerms:
    terms: bytes
    length: int
    folds: bool

    def to_wire(self) -> list:
        return [self.terms, self.length, self.folds]


def warm_up() -> None:
    """Load jieba's dictionary now (a parser server does, before it forks)."""
    segmenter()


# Words repeat from chunk to chunk: the common ones are hashed once per process.
@lru_cache(maxsize=1 << 15)
def term_hash(token: str) -> int:
    """A token's stable 64-bit id (the same in every process and release)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def term_hashes(tokens: Iterable[str]) -> np.ndarray:
    return np.fromiter((term_hash(token) for token in tokens), dtype=np.int64)


def chunk_terms(text: str, heading_path: Sequence[str] = ()) -> ChunkTerms:
    """The terms of a chunk's text and of the headings it is under: a FAQ's
    question, a glossary's "Definitions", a report's title are how people ask
    for the text below them."""
    headings = [str(heading) for heading in heading_path or () if heading]
    tokens = keyword_tokens(" ".join([*headings, text]))
    return counted_terms(Counter(tokens), folds(text))


def counted_terms(counts: Counter, text_folds: bool) -> ChunkTerms:
    """The stored terms of a text whose `keyword_tokens` are counted in `counts`."""
    hashes = term_hashes(counts)
    frequencies = np.fromiter(
        (min(count, _MAX_COUNT) for count in counts.values()),
        dtype=np.uint16,
        count=len(counts),
    )
    order = np.argsort(hashes, kind="stable")
    blob = (
        hashes[order].astype("<i8").tobytes()
        + frequencies[order].astype("<u2").tobytes()
    )
    return ChunkTerms(blob, sum(counts.values()), text_folds)


def decode(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, counts) of a stored `terms` value."""
    size = len(blob) // _ENTRY_BYTES
    if size * _ENTRY_BYTES != len(blob):
        raise ValueError("terms of the wrong size")
    hashes = np.frombuffer(blob, dtype="<i8", count=size)
    counts = np.frombuffer(blob, dtype="<u2", count=size, offset=size * 8)
    return hashes, counts


def valid_terms(blob: object) -> bool:
    """Whether `blob` is a stored `terms` value as `counted_terms` makes them
    (checked on what parsers send): hashes ascending, each once, counts from 1.
    The index's lists rely on it (one posting per row and term)."""
    if type(blob) is not bytes or len(blob) % _ENTRY_BYTES:
        return False
    hashes, counts = decode(blob)
    return bool(np.all(hashes[1:] > hashes[:-1]) and np.all(counts > 0))
