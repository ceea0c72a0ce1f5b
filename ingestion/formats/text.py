"""Plain text: paragraphs separated by blank lines."""

from __future__ import annotations

from ..blocks import Block
from .base import ParseRequest
from .encoding import decode_text
from .textutil import clean_text, paragraphs


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """The whole file (the request's shard and limits do not apply)."""
    return [Block(text=p) for p in paragraphs(clean_text(decode_text(data)))]
