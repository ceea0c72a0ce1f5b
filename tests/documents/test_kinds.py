"""`documents/kinds.py`: every declared file kind has a parser, a sniff and a
sample that sniffs as its type and parses; the registry's lookups (no database)."""

from __future__ import annotations

import io

import pytest

from documents.kinds import FILE_KINDS, FileKind, FileKinds, FileType
from documents.sniffing import HEAD_BYTES, signature
from ingestion.formats import PARSERS, parse_document
from tests.samples import type_samples

TYPES = [(kind, file_type) for kind in FILE_KINDS for file_type in kind.types]
# Text kinds are told apart by their names alone: their bytes are text to each.
TEXT_TYPES = {file_type for kind in FILE_KINDS if kind.text for file_type in kind.types}


@pytest.fixture(scope="module")
def samples() -> dict[str, bytes]:
    return type_samples()


def sniffed_as(sample: bytes) -> set[FileType]:
    """Every declared type whose sniff accepts `sample`."""
    found = set()
    for _, file_type in TYPES:
        file = io.BytesIO(sample)
        if file_type.sniff(sample[:HEAD_BYTES], file):
            found.add(file_type)
        assert file.tell() == 0, f"{file_type.label}'s sniff moved the file"
    return found


def test_every_kind_has_a_parser():
    assert set(PARSERS) == set(FILE_KINDS)
    assert all(callable(PARSERS[kind]) for kind in FILE_KINDS)


@pytest.mark.parametrize(
    ("kind", "file_type"), TYPES, ids=[t.extension for _, t in TYPES]
)
def test_every_type_has_a_sample_that_sniffs_as_it_alone(kind, file_type, samples):
    assert file_type.extension in samples, "add one to tests/samples.type_samples"

    found = sniffed_as(samples[file_type.extension])

    assert found == (TEXT_TYPES if kind.text else {file_type})


@pytest.mark.parametrize(
    ("kind", "file_type"), TYPES, ids=[t.extension for _, t in TYPES]
)
def test_every_types_sample_parses_to_text(kind, file_type, samples):
    blocks = parse_document(kind.name, samples[file_type.extension])

    assert blocks
    assert all(block.text.strip() for block in blocks)


def test_the_samples_are_of_declared_types_only(samples):
    assert set(samples) == {file_type.extension for _, file_type in TYPES}


class TestLookups:
    def test_every_stored_content_type_finds_its_kind(self):
        for kind, file_type in TYPES:
            assert FILE_KINDS.for_content_type(file_type.content_type) is kind

    def test_every_extension_finds_its_kind_and_type_whatever_its_case(self):
        for kind, file_type in TYPES:
            for extension in file_type.extensions:
                found = FILE_KINDS.for_extension(extension.upper())
                assert found == (kind, file_type)

    def test_a_kind_is_found_by_its_name(self):
        assert [FILE_KINDS.named(kind.name) for kind in FILE_KINDS] == list(FILE_KINDS)

    @pytest.mark.parametrize(
        ("lookup", "value", "message"),
        [
            ("for_content_type", "application/zip", "no parser for application/zip"),
            ("for_extension", ".odt", "no file type has the extension .odt"),
            ("named", "odt", "unknown file kind odt"),
        ],
    )
    def test_anything_undeclared_is_a_value_error(self, lookup, value, message):
        with pytest.raises(ValueError, match=message):
            getattr(FILE_KINDS, lookup)(value)

    def test_the_types_are_listed_for_people(self):
        assert FILE_KINDS.listed() == (
            "PDF, DOCX, PPTX, XLSX, Markdown, HTML, plain text, PNG, JPEG or TIFF"
        )


def test_an_extension_or_content_type_declared_twice_is_refused():
    png = FileType("PNG", "image/png", (".png",), signature(b"\x89PNG"))
    apng = FileType("APNG", "image/apng", (".png",), signature(b"\x89PNG"))
    with pytest.raises(ValueError, match=r"\.png is declared twice"):
        FileKinds(FileKind("image", (png,)), FileKind("animation", (apng,)))
    portable = FileType("PNG", "image/png", (".pnp",), signature(b"\x89PNG"))
    with pytest.raises(ValueError, match="image/png is declared twice"):
        FileKinds(FileKind("image", (png,)), FileKind("portable", (portable,)))
