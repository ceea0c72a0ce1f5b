"""Embedders that fail or dawdle inside a parser process (importable there: no
Django)."""

from __future__ import annotations

import time

import numpy as np


class RaisingEmbedder:
    name = "raising"
    dimension = 8
    portable = True

    def embed(self, texts):
        raise ValueError("a bug of ours, not of the file")


def _refuse_to_load():
    raise RuntimeError("this object cannot be read in the parser process")


class UnreadableEmbedder(RaisingEmbedder):
    name = "unreadable"

    def __reduce__(self):
        return (_refuse_to_load, ())


class SlowEmbedder:
    """Takes `seconds` over each batch, as a semantic model does over many."""

    dimension = 8
    portable = True

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.name = f"slow-{seconds}"  # parsers keep an embedder by its name

    def embed(self, texts):
        time.sleep(self.seconds)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors
