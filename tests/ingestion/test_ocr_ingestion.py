"""Scans and images through the real worker: chunks marked as OCR, progress by page,
the admin's flags, the error codes when OCR cannot run."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from retrieval.models import Chunk
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/documents/document/"


def scan(text: str) -> Image.Image:
    image = Image.new("L", (1200, 300), 255)
    font = ImageFont.load_default(size=46)
    ImageDraw.Draw(image).text((60, 110), text, font=font, fill=0)
    return image


def scanned_pdf(*texts: str) -> bytes:
    pages = [scan(text) for text in texts]
    data = io.BytesIO()
    pages[0].save(
        data, format="PDF", resolution=200, save_all=True, append_images=pages[1:]
    )
    return data.getvalue()


def png(text: str) -> bytes:
    data = io.BytesIO()
    scan(text).save(data, format="PNG")
    return data.getvalue()


def ingest(knowledge_base, submit, run_worker, content, **document):
    document = DocumentFactory(
        knowledge_base=knowledge_base, content=content, **document
    )
    task = submit(document)
    _, lines = run_worker(task.pk)
    task.refresh_from_db()
    return document, task, lines


def test_a_scanned_pdf_becomes_chunks_read_by_ocr(knowledge_base, submit, run_worker):
    document, task, _ = ingest(
        knowledge_base,
        submit,
        run_worker,
        scanned_pdf("The lease runs for five years", "Rent is due monthly"),
        filename="lease.pdf",
        content_type="application/pdf",
    )

    assert task.status == "succeeded", task.error_detail
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    text = " ".join(chunk.text for chunk in chunks)
    assert "five years" in text
    assert "Rent is due monthly" in text
    assert all(0.8 <= chunk.ocr_confidence <= 1 for chunk in chunks)


def test_an_image_upload_is_read(knowledge_base, submit, run_worker):
    document, task, _ = ingest(
        knowledge_base,
        submit,
        run_worker,
        png("Delivery note 42"),
        filename="note.png",
        content_type="image/png",
    )

    assert task.status == "succeeded", task.error_detail
    (chunk,) = Chunk.objects.filter(document=document)
    assert chunk.text == "Delivery note 42"
    assert chunk.page == 1


@pytest.mark.parametrize(
    ("content", "filename", "content_type"),
    [
        (scanned_pdf("Only a scan"), "scan.pdf", "application/pdf"),
        (png("Only an image"), "scan.png", "image/png"),
    ],
)
def test_with_ocr_off_scans_fail_as_ocr_unavailable(
    knowledge_base, submit, run_worker, settings, content, filename, content_type
):
    settings.OCR_ENABLED = False

    _, task, _lines = ingest(
        knowledge_base,
        submit,
        run_worker,
        content,
        filename=filename,
        content_type=content_type,
    )

    assert task.status == "failed"
    assert task.error_code == "ocr_unavailable"


def test_the_admin_shows_what_ocr_read_and_flags_low_confidence(
    client, reviewer, knowledge_base, submit, run_worker, settings
):
    document, task, _ = ingest(
        knowledge_base,
        submit,
        run_worker,
        scanned_pdf("Signed by both parties"),
        filename="signed.pdf",
        content_type="application/pdf",
    )
    assert task.status == "succeeded", task.error_detail
    client.force_login(reviewer)

    body = client.get(f"{CHANGELIST}{document.pk}/change/").content.decode()
    settings.OCR_MIN_CONFIDENCE = 1.01  # every page is now below the floor
    flagged = client.get(f"{CHANGELIST}{document.pk}/change/").content.decode()

    assert "1 of 1 chunks were read by OCR" in body
    assert "% confidence" in body
    assert 'class="ocr-low"' not in body
    assert "below the confidence floor of 101 %" in flagged
    assert 'class="ocr-low">low<' in flagged


def test_parse_progress_counts_the_pages(knowledge_base, submit, run_worker):
    _, task, lines = ingest(
        knowledge_base,
        submit,
        run_worker,
        scanned_pdf("One", "Two", "Three"),
        filename="three.pdf",
        content_type="application/pdf",
    )

    assert task.status == "succeeded", task.error_detail
    parse = [line for line in lines if line.startswith("stage=parse")]
    assert parse[0] == "stage=parse 0/1"
    assert "stage=parse 0/3" in parse
    assert parse[-1] == "stage=parse 3/3"
