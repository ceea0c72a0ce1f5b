"""Plain text: paragraphs separated by blank lines."""

from __future__ import annotations

from ..blocks import Block, check_block_count
from .base import ParseRequest
from .encoding import decode_text
from .textutil import clean_text, iter_paragraphs


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """The whole file (the request's shard does not apply)."""
    limit = request.limits.max_blocks
    blocks = []
    for paragraph in iter_paragraphs(clean_text(decode_text(data))):
        blocks.append(Block(text=paragraph))
        check_block_count(len(blocks), limit)
    return blocks
