"""Embedders that fail inside a parser process (importable there: no Django)."""

from __future__ import annotations


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
