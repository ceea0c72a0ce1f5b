"""Zip bombs that lie: an Office package whose zip directory under-declares a
member's size passes the directory's size and ratio checks, so the member itself
must stop being inflated at the size it declared.

The lying packages are real DOCX, XLSX and PPTX files whose main XML part inflates
to 1 GiB of trailing spaces (still well-formed XML) while the central directory and
the local header declare its original size and CRC (`tests.ingestion.hostile`).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile

import pytest

from documents.models import Document
from ingestion import services
from ingestion.blocks import FileTooLarge, ParseError, ParseLimits
from ingestion.formats import parse_document
from ingestion.formats.ooxml import BoundedZipFile, check_archive, check_members
from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.factories import DocumentFactory
from tests.ingestion.hostile import lying_package
from tests.ingestion.processes import Process
from tests.samples import docx_bytes, pptx_bytes, xlsx_bytes

GIB = 1 << 30
# Half of what one lying member inflates to: zipfile's own read() needs all of it.
PARSE_MEMORY_BYTES = 512 * 1024 * 1024
CONTENT_TYPES = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
# The part each format's reader opens first, and how a real package is made.
LYING_MEMBERS = {
    "docx": (docx_bytes, "word/document.xml"),
    "xlsx": (xlsx_bytes, "xl/workbook.xml"),
    "pptx": (pptx_bytes, "ppt/slides/slide1.xml"),
}
LIE = "inflates to more than its zip directory declares (a zip bomb)"


def lying(kind: str, inflated_bytes: int = GIB) -> bytes:
    make, member = LYING_MEMBERS[kind]
    return lying_package(make(), member, inflated_bytes)


@pytest.mark.parametrize("kind", sorted(LYING_MEMBERS))
def test_a_lying_package_passes_the_directory_checks_it_was_made_for(kind):
    bomb = lying(kind)
    assert len(bomb) < 2 * 1024 * 1024
    check_archive(bomb, ParseLimits(), label=kind.upper())  # declares only KiB
    with zipfile.ZipFile(io.BytesIO(bomb)) as archive:
        assert archive.testzip() is None  # cut at its declared size, the CRC holds


@pytest.mark.parametrize("kind", sorted(LYING_MEMBERS))
def test_a_lying_member_fails_at_the_first_byte_past_its_declared_size(kind):
    with pytest.raises(FileTooLarge, match=re.escape(LIE)):
        parse_document(kind, lying(kind))
    with pytest.raises(FileTooLarge, match=re.escape(LIE)):
        check_members(lying(kind), label=kind.upper())


def test_an_honest_package_reads_the_same_through_the_bounded_reader():
    package = docx_bytes(["A paragraph."] * 500)
    with (
        zipfile.ZipFile(io.BytesIO(package)) as plain,
        BoundedZipFile(io.BytesIO(package), label="DOCX") as bounded,
    ):
        for info in plain.infolist():
            assert bounded.read(info.filename) == plain.read(info)


def test_a_member_whose_crc_is_wrong_is_still_not_a_valid_archive():
    # The bounded reader checks the CRC itself: zipfile's check is off behind it.
    package = bytearray(docx_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(package))) as archive:
        info = archive.getinfo("word/document.xml")
        entry = archive.start_dir
    name = info.filename.encode()
    while package[entry + 46 : entry + 46 + len(name)] != name:
        lengths = struct.unpack_from("<HHH", package, entry + 28)
        entry += 46 + sum(lengths)
    struct.pack_into("<I", package, entry + 16, info.CRC ^ 1)  # its CRC-32

    with pytest.raises(ParseError, match="not a valid DOCX archive"):
        parse_document("docx", bytes(package))


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_lying_packages_fail_fast_in_a_real_worker_and_the_next_task_runs(
    knowledge_base, editor, process_env
):
    """The worker process meets three lying packages (1 GiB each, parsers capped at
    512 MiB) and then an ordinary DOCX, in that order. Before the bounded reader,
    zipfile inflated each lying member whole and the parser died of memory."""
    queued = []
    for kind in ("docx", "xlsx", "pptx"):
        queued.append(_submit(editor, knowledge_base, lying(kind), kind, "bomb"))
    fine = _submit(editor, knowledge_base, docx_bytes(), "docx", "fine")

    worker = Process(
        process_env,
        "run_ingestion_worker",
        "--worker-id",
        "bombs",
        INGESTION_PARSE_MEMORY_BYTES=str(PARSE_MEMORY_BYTES),
        INGESTION_PARSE_PROCESSES="1",
    )
    assert worker.stop(timeout=180) == 0, worker.stderr

    for task_id in queued:
        task = IngestionTask.objects.get(pk=task_id)
        assert (task.status, task.error_code, task.attempt) == (
            "failed",
            "file_too_large",
            1,
        ), task.error_detail
        assert LIE in task.error_detail
        assert (task.finished_at - task.started_at).total_seconds() < 10
        assert Document.objects.get(pk=task.document_id).status == "failed"
        assert not Chunk.objects.filter(document_id=task.document_id).exists()
    after = IngestionTask.objects.get(pk=fine)
    assert after.status == "succeeded", after.error_detail
    assert Chunk.objects.filter(document_id=after.document_id).exists()


def _submit(editor, knowledge_base, content: bytes, kind: str, name: str):
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=content,
        filename=f"{name}.{kind}",
        content_type=CONTENT_TYPES[kind],
    )
    return services.document_submit(user=editor, document_id=document.pk).pk
