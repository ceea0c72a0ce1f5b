"""BM25 over a snapshot's inverted index (`Postings`), as one index over its
`Segments` (the base's postings, those of the rows appended since, less the rows
removed, with the statistics of the rows searched): scores equal those of an
index built anew.

`top` finds the best rows with the compiled top-k (`bm25_native`), a document at
a time, where it was built. Otherwise it applies the query terms rarest first;
before a long posting list it checks the scores so far against what the remaining
terms could add at most, and once the `count`-th best row is above that bound it
only finishes the rows that could still reach it, term by term (a binary search
per row), dropping the rows each term leaves out of reach. Both give the result
of scoring every row, to the bit. No Django here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from retrieval.terms import term_hash

from . import bm25_native

BM25_K1 = 1.2
BM25_B = 0.75
# A posting list is long enough to check the bound before it when it holds this
# share of the rows; the check scans the scores once.
LONG_LIST_SHARE = 1 / 32


@dataclass
class Postings:
    """A BM25 inverted index in flat arrays. Terms are known by their 64-bit hash
    (`retrieval.terms`), sorted: the term `hashes[t]` owns `rows[starts[t]:
    starts[t+1]]` and their `counts`."""

    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    starts: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint16))

    @classmethod
    def merged(cls, entries, hashes, rows, counts) -> Postings:
        """`entries` (hash-ordered, as `entries()` gives them) with new ones, one
        per (term, row): its term's hash, the row, the count. A publish sorts its
        own entries only, not the whole index again."""
        # Common terms make long runs of equal keys, which the stable sort
        # handles in linear time and quicksort badly.
        order = np.argsort(hashes, kind="stable")
        if not len(entries[0]):
            return cls._from_sorted(hashes[order], rows[order], counts[order])
        at = np.searchsorted(entries[0], hashes[order], side="right")
        return cls._from_sorted(
            *(
                np.insert(old, at, new[order])
                for old, new in zip(entries, (hashes, rows, counts), strict=True)
            )
        )

    @classmethod
    def _from_sorted(cls, hashes, rows, counts) -> Postings:
        if not len(hashes):
            return cls()
        firsts = np.flatnonzero(np.diff(hashes)) + 1
        starts = np.concatenate(([0], firsts, [len(hashes)])).astype(np.int64)
        return cls(hashes[starts[:-1]], starts, rows, counts)

    def term(self, hashed: int) -> int | None:
        """The index of the term with this hash, or None."""
        position = int(np.searchsorted(self.hashes, hashed))
        if position < len(self.hashes) and self.hashes[position] == hashed:
            return position
        return None

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term hash, row, count) of every posting, in hash order."""
        return np.repeat(self.hashes, np.diff(self.starts)), self.rows, self.counts

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.hashes, self.starts, self.rows, self.counts))


@dataclass
class Segments:
    """Postings made at different times, scored as one index: the base's and
    those of the rows appended since (their rows numbered after the base's), less
    the `removed` rows (sorted), whose postings stay until the next rebuild."""

    parts: tuple[Postings, ...]
    lengths: np.ndarray
    removed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @cached_property
    def size(self) -> int:
        """Rows searched."""
        return len(self.lengths) - len(self.removed)

    @cached_property
    def average(self) -> float:
        lengths = self.lengths
        if len(self.removed):
            lengths = np.delete(np.asarray(lengths), self.removed)
        return (float(lengths.mean()) if len(lengths) else 0.0) or 1.0

    @cached_property
    def _gone(self) -> np.ndarray:
        """A flag per row: removed."""
        gone = np.zeros(len(self.lengths), dtype=bool)
        gone[self.removed] = True
        return gone

    @cached_property
    def norms(self) -> np.ndarray:
        """Each row's length normalisation, the denominator's share of BM25 that
        depends on the row only: computed once, in this process's memory
        (random reads of a mapped file cost a page walk each)."""
        lengths = np.asarray(self.lengths, dtype=np.float32)
        return BM25_K1 * (1 - BM25_B + BM25_B * lengths / self.average)

    def nbytes(self) -> int:
        """Memory of its own (the parts and lengths are the snapshot's): the
        norms and flags, once a search made them."""
        made = ("norms", "_gone")
        return sum(self.__dict__[name].nbytes for name in made if name in self.__dict__)

    @cached_property
    def gone_flags(self) -> np.ndarray | None:
        """`_gone` as the compiled top-k reads it (a byte a row), or None."""
        return self._gone.view(np.uint8) if len(self.removed) else None

    def frequency(self, hashed: int) -> int:
        """How many rows searched hold the term."""
        return self.held(self.slices(hashed))

    def held(self, slices: Sequence[tuple[int, int, int]]) -> int:
        """How many rows searched these slices of a term's postings hold: less
        the removed rows among them, counted exactly at each query (a mask
        lookup per posting) rather than kept per term at each publish."""
        held = 0
        for part, start, end in slices:
            held += end - start
            if len(self.removed):
                held -= int(self._gone[self.parts[part].rows[start:end]].sum())
        return held

    def slices(self, hashed: int) -> list[tuple[int, int, int]]:
        """(part, start, end) of the term's postings in each part that has it."""
        found = []
        for part, postings in enumerate(self.parts):
            term = postings.term(hashed)
            if term is not None:
                found.append(
                    (part, int(postings.starts[term]), int(postings.starts[term + 1]))
                )
        return found

    def postings_of(
        self, slices: tuple[tuple[int, int, int], ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows (ascending) and counts of a term's slices of the parts."""
        if len(slices) == 1:
            part, start, end = slices[0]
            postings = self.parts[part]
            return postings.rows[start:end], postings.counts[start:end]
        return (
            np.concatenate([self.parts[p].rows[s:e] for p, s, e in slices]),
            np.concatenate([self.parts[p].counts[s:e] for p, s, e in slices]),
        )

    def contribution(
        self, term: _QueryTerm, rows: np.ndarray, counts: np.ndarray
    ) -> np.ndarray:
        """What `term` adds to the scores of these rows, holding it `counts` times."""
        counts = counts.astype(np.float32)
        return term.weight * counts * (BM25_K1 + 1) / (counts + self.norms[rows])

    def forget_removed(self, scores: np.ndarray) -> None:
        """Zero the scores of removed rows (`scores` has one per row)."""
        if len(self.removed):
            scores[self.removed] = 0


@dataclass(frozen=True)
class _QueryTerm:
    slices: tuple[tuple[int, int, int], ...]  # (part, start, end) of its postings
    weight: float  # its count in the question times its idf

    @property
    def length(self) -> int:
        """Its postings, removed rows' included."""
        return sum(end - start for _, start, end in self.slices)

    @property
    def bound(self) -> float:
        """The most it adds to a row's score."""
        return self.weight * (BM25_K1 + 1)


def _query_terms(segments: Segments, tokens: list[str]) -> list[_QueryTerm]:
    """The question's terms the index holds, rarest first."""
    terms = []
    for token, query_count in Counter(tokens).items():
        hashed = term_hash(token)
        slices = tuple(segments.slices(hashed))
        frequency = segments.held(slices)
        if frequency <= 0:
            continue  # not held, or by removed rows only
        size = segments.size
        idf = np.log1p((size - frequency + 0.5) / (frequency + 0.5))
        terms.append(_QueryTerm(slices, float(query_count * idf)))
    terms.sort(key=lambda term: (term.length, term.slices))
    return terms


def scores(segments: Segments, tokens: list[str]) -> np.ndarray:
    """BM25 score of every row (zeros where no query term occurs)."""
    result = np.zeros(len(segments.lengths), dtype=np.float32)
    for term in _query_terms(segments, tokens):
        rows, counts = segments.postings_of(term.slices)
        result[rows] += segments.contribution(term, rows, counts)
    segments.forget_removed(result)
    return result


def at(segments: Segments, tokens: list[str], rows: np.ndarray) -> np.ndarray:
    """BM25 scores of the given rows only (rows searched)."""
    terms = _query_terms(segments, tokens)
    return _scores_at(segments, terms, np.asarray(rows, dtype=np.int64))


def _scores_at(
    segments: Segments, terms: list[_QueryTerm], rows: np.ndarray
) -> np.ndarray:
    result = np.zeros(len(rows), dtype=np.float32)
    for term in terms:
        term_rows, term_counts = segments.postings_of(term.slices)
        at = np.searchsorted(term_rows, rows)
        inside = at < len(term_rows)
        held = np.zeros(len(rows), dtype=bool)
        held[inside] = term_rows[at[inside]] == rows[inside]
        if not held.any():
            continue
        counts = term_counts[at[held]]
        result[held] += segments.contribution(term, rows[held], counts)
    return result


def top(
    segments: Segments, tokens: list[str], count: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the `count` best scores above 0, and those scores."""
    size = len(segments.lengths)
    terms = _query_terms(segments, tokens)
    if bm25_native.available() and terms:
        found = bm25_native.top(
            [segments.postings_of(term.slices) for term in terms],
            [term.weight for term in terms],
            BM25_K1 + 1,
            segments.norms,
            segments.gone_flags,
            count,
        )
        if found is not None:
            return found
    result = np.zeros(size, dtype=np.float32)
    remaining = sum(term.bound for term in terms)
    for index, term in enumerate(terms):
        if index and term.length > size * LONG_LIST_SHARE:
            # `> 0` first: numpy finds the nonzero of a bool array ten times
            # faster than of a float one.
            rows = np.flatnonzero(result > 0)
            partial = result[rows]
            kth = _kth(partial, count)
            if kth > remaining:
                # Only rows that the remaining terms could lift to the count-th
                # best score are worth finishing; each term finished lowers
                # that bound and may raise the count-th best.
                for later in terms[index:]:
                    hopeful = partial + remaining >= kth
                    rows, partial = rows[hopeful], partial[hopeful]
                    partial += _scores_at(segments, [later], rows)
                    remaining -= later.bound
                    kth = max(kth, _kth(partial, count))
                return _best(rows, partial, count)
        rows, counts = segments.postings_of(term.slices)
        result[rows] += segments.contribution(term, rows, counts)
        segments.forget_removed(result)  # a removed row is never a candidate
        remaining -= term.bound
    return _best(np.arange(size), result, count)


def _kth(values: np.ndarray, count: int) -> float:
    """The `count`-th largest value; 0 when there are fewer."""
    if len(values) < count:
        return 0.0
    return float(np.partition(values, len(values) - count)[len(values) - count])


def _best(
    rows: np.ndarray, values: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray]:
    positive = np.flatnonzero(values > 0)
    return best(rows[positive], values[positive], count)


def best(
    rows: np.ndarray, values: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the `count` best values, and those values. Every row tied
    with the count-th best stays: the seam breaks ties by chunk id, which an
    arbitrary cut among them would not."""
    if len(values) > count:
        kept = values >= _kth(values, count)
        rows, values = rows[kept], values[kept]
    return rows, values
