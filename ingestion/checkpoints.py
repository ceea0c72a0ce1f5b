"""What one document's ingestion keeps between attempts, stage by stage.

    ocr       the blocks of each page read by OCR, one artifact per page, written
              as the parser reports the page: a run killed at page k reads again
              from page k on
    parse     the chunks (and their BM25 terms when the parsers made them): a
              retry after a failure in embedding or indexing parses nothing
    vectors   the chunks' vectors, under the embedder's name; while the worker
              embeds them (PDFs), each batch as it is made, so a task that yields
              or is killed while embedding goes on from its next batch

Sentence vectors need nothing here: they are stored by digest as they are made
(`retrieval.meaning`). Each key names what produced the output
(`parser_version`, `ocr_version`, the embedder's name), so a new deployment or
setting never reads an older one's; storage, checks and deletion are in
`artifacts.py`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from functools import cache
from importlib import metadata
from pathlib import Path

import numpy as np

from documents.models import Document
from retrieval.terms import ChunkTerms

from .artifacts import (
    artifact_name,
    artifact_pages,
    artifact_read,
    artifact_write,
    artifacts_discard,
)
from .blocks import Block, ParseLimits
from .chunking import Chunk
from .ocr import DEFAULT_DPI
from .ocr.engine import MODEL_FILES
from .sandbox import Extracted

APP = Path(__file__).resolve().parent
# The code whose output a parse artifact holds; any change to it is a new parser.
PARSER_SOURCES = ("formats", "ocr", "blocks.py", "chunking.py", "sandbox/server.py")
PARSER_LIBRARIES = (
    "pdfminer.six",
    "pypdfium2",
    "python-docx",
    "python-pptx",
    "openpyxl",
    "lxml",
    "markdown-it-py",
    "beautifulsoup4",
    "jieba",
)
OCR_LIBRARIES = ("rapidocr", "onnxruntime", "pillow", "pypdfium2")


class Checkpoints:
    """The artifacts of one document version for one parse setting and embedder."""

    def __init__(self, document: Document, limits: ParseLimits, embedder) -> None:
        self.document_id = document.pk
        content = document.sha256
        self._ocr_key = [content, ocr_version(), list(limits.ocr_languages)]
        self._parse_key = [content, parser_version(), _limits(limits)]
        self._vectors_key = [self._parse_key, embedder.name]

    def ocr_pages(self) -> dict[int, list[Block]]:
        """The pages an earlier attempt read by OCR: page number -> its blocks."""
        pages: dict[int, list[Block]] = {}
        for number in artifact_pages(self.document_id, "ocr", self._ocr_key):
            value = artifact_read(self._ocr_name(number))
            try:
                pages[number] = [Block.from_wire(block) for block in value]
            except (TypeError, ValueError):  # missing or not blocks: read again
                continue
        return pages

    def save_ocr_page(self, number: int, blocks: list[Block]) -> bool:
        """Keep one page read by OCR; whether it was kept."""
        return artifact_write(
            self._ocr_name(number), [block.to_wire() for block in blocks]
        )

    def parsed(self) -> Extracted | None:
        value = artifact_read(artifact_name(self.document_id, "parse", self._parse_key))
        try:
            chunks_data, terms_data = value
            chunks = [Chunk.from_wire(chunk) for chunk in chunks_data]
            terms = None
            if terms_data is not None:
                terms = [ChunkTerms(bytes(b), n, f) for b, n, f in terms_data]
        except (TypeError, ValueError):
            return None
        return Extracted(chunks, None, terms)

    def save_parsed(self, extracted: Extracted) -> None:
        terms = extracted.terms
        artifact_write(
            artifact_name(self.document_id, "parse", self._parse_key),
            [
                [chunk.to_wire() for chunk in extracted.chunks],
                None if terms is None else [t.to_wire() for t in terms],
            ],
        )

    def vectors(self, count: int) -> np.ndarray | None:
        """The vectors of the `count` chunks, if an earlier attempt made them."""
        try:
            dimension, data = artifact_read(self._vectors_name())
            vectors = np.frombuffer(data, dtype="<f4").reshape(count, dimension)
        except (TypeError, ValueError):  # missing, or not this many vectors
            return None
        return vectors.astype(np.float32)

    def save_vectors(self, vectors: np.ndarray) -> None:
        artifact_write(
            self._vectors_name(),
            [vectors.shape[1], vectors.astype("<f4").tobytes()],
        )

    def vector_batches(self, size: int) -> dict[int, np.ndarray]:
        """The batches of `size` chunks an earlier turn embedded: index -> vectors."""
        batches: dict[int, np.ndarray] = {}
        key = [self._vectors_key, size]
        for index in artifact_pages(self.document_id, "vector-batch", key):
            try:
                dimension, data = artifact_read(self._batch_name(key, index))
                vectors = np.frombuffer(data, dtype="<f4").reshape(-1, dimension)
            except (TypeError, ValueError):  # missing or damaged: embedded again
                continue
            batches[index] = vectors.astype(np.float32)
        return batches

    def save_vector_batch(self, size: int, index: int, vectors: np.ndarray) -> bool:
        """Keep the vectors of batch `index` (of `size` chunks); whether kept."""
        return artifact_write(
            self._batch_name([self._vectors_key, size], index),
            [vectors.shape[1], vectors.astype("<f4").tobytes()],
        )

    def discard(self) -> None:
        """The task is done with them (succeeded): its chunks hold the result."""
        artifacts_discard(document_id=self.document_id)

    def _ocr_name(self, number: int) -> str:
        return artifact_name(self.document_id, "ocr", self._ocr_key, page=number)

    def _batch_name(self, key: list, index: int) -> str:
        return artifact_name(self.document_id, "vector-batch", key, page=index)

    def _vectors_name(self) -> str:
        return artifact_name(self.document_id, "vectors", self._vectors_key)


def _limits(limits: ParseLimits) -> dict:
    values = asdict(limits)
    values["ocr_languages"] = list(limits.ocr_languages)
    return values


@cache
def parser_version() -> str:
    """A digest of the parsing code and the libraries it reads files with."""
    return _digest(PARSER_SOURCES, PARSER_LIBRARIES)


@cache
def ocr_version() -> str:
    """A digest of the OCR code, engine, runtime, models and resolution."""
    return _digest(("ocr",), OCR_LIBRARIES, extra=[MODEL_FILES, DEFAULT_DPI])


def _digest(sources: tuple[str, ...], libraries: tuple[str, ...], extra=()) -> str:
    digest = hashlib.sha256(repr(list(extra)).encode())
    for source in sources:
        path = APP / source
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(APP).as_posix().encode())
            digest.update(file.read_bytes())
    for library in libraries:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{library}=={version};".encode())
    return digest.hexdigest()[:16]
