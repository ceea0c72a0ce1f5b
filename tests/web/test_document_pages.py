"""`web:document-page`: a page of an original drawn as a PNG, under the API's
visibility rule, in a child process that is time-limited, and never a 500."""

from __future__ import annotations

import io

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from PIL import Image

from documents.models import Role
from tests.factories import DocumentFactory, UserFactory
from tests.ingestion.formats.pdf_samples import text_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path


def _pdf_document(knowledge_base, content: bytes, **fields):
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        filename="report.pdf",
        content_type="application/pdf",
        **fields,
    )
    default_storage.delete(document.storage_key)
    document.storage_key = default_storage.save(
        f"originals/{knowledge_base.id}/{document.pk}.pdf", ContentFile(content)
    )
    document.save(update_fields=["storage_key"])
    return document


def _url(document, page: int = 1, **query) -> str:
    url = reverse("web:document-page", args=[document.pk, page])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


@pytest.fixture
def draft_pdf(knowledge_base):
    return _pdf_document(knowledge_base, text_pdf(2), review_pending=True)


def test_a_reviewer_gets_a_pdf_page_as_a_png_and_it_is_kept(
    client, reviewer, draft_pdf
):
    client.force_login(reviewer)
    response = client.get(_url(draft_pdf, 2, width=480))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    assert image.width == 480
    key = f"page-images/{draft_pdf.pk}/2-480.png"
    assert default_storage.exists(key)
    # Served from storage the second time: the same bytes.
    assert client.get(_url(draft_pdf, 2, width=480)).content == response.content


def test_a_viewer_cannot_fetch_a_drafts_page_but_can_a_published_one(
    client, viewer, knowledge_base, draft_pdf
):
    client.force_login(viewer)
    assert client.get(_url(draft_pdf)).status_code == 404
    published = _pdf_document(knowledge_base, text_pdf(1), published=True)
    assert client.get(_url(published)).status_code == 200


def test_non_members_get_404_and_anonymous_callers_sign_in(
    client, draft_pdf, knowledge_base
):
    response = client.get(_url(draft_pdf))
    assert response.status_code == 302
    published = _pdf_document(knowledge_base, text_pdf(1), published=True)
    client.force_login(UserFactory())
    assert client.get(_url(draft_pdf)).status_code == 404
    assert client.get(_url(published)).status_code == 404


def test_an_editor_sees_drafts_of_their_knowledge_base(client, editor, draft_pdf):
    client.force_login(editor)
    assert client.get(_url(draft_pdf)).status_code == 200


@pytest.mark.parametrize(
    "content",
    [b"%PDF-1.7\nnot really a pdf at all", b"%PDF-1.4\n" + b"\x00\xff" * 5000],
)
def test_a_broken_pdf_gives_an_error_image_not_a_500(
    client, reviewer, knowledge_base, content
):
    document = _pdf_document(knowledge_base, content, review_pending=True)
    client.force_login(reviewer)
    response = client.get(_url(document))
    assert response.status_code == 422
    assert response["Content-Type"].startswith("image/svg+xml")
    assert response["X-Error-Code"] == "page_unreadable"
    assert "cannot be shown" in response.content.decode()
    # The failure is remembered: the second request does not draw again.
    again = client.get(_url(document))
    assert again.status_code == 422


def test_a_page_past_the_end_and_an_odd_width_are_404(client, reviewer, draft_pdf):
    client.force_login(reviewer)
    assert client.get(_url(draft_pdf, 9)).status_code == 404
    assert client.get(_url(draft_pdf, 1, width=12345)).status_code == 404


def test_an_office_file_has_no_page_images(client, reviewer, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
    client.force_login(reviewer)
    response = client.get(_url(document))
    assert response.status_code == 404
    assert response["X-Error-Code"] == "no_page_images"


def test_an_image_file_is_drawn(client, reviewer, knowledge_base):
    picture = io.BytesIO()
    Image.new("RGB", (2000, 1000), "white").save(picture, format="PNG")
    document = _pdf_document(knowledge_base, picture.getvalue(), review_pending=True)
    document.content_type = "image/png"
    document.save(update_fields=["content_type"])
    client.force_login(reviewer)
    response = client.get(_url(document, width=480))
    assert response.status_code == 200
    assert Image.open(io.BytesIO(response.content)).size == (480, 240)


def test_the_render_child_is_killed_at_the_time_limit(
    client, reviewer, draft_pdf, settings, monkeypatch
):
    from web import page_images

    settings.PAGE_RENDER_SECONDS = 1
    # A child that never finishes: a script that sleeps, run as the render child.
    monkeypatch.setattr(page_images, "_CHILD", _sleeper())
    client.force_login(reviewer)
    response = client.get(_url(draft_pdf))
    assert response.status_code == 422
    assert response["X-Error-Code"] == "render_timeout"


def test_the_render_child_caps_its_memory(tmp_path):
    """A render that needs more than its address space is refused in the child
    (60 MB draws this page at 1440 px; 40 MB is too little)."""
    import subprocess
    import sys

    from web import page_images
    from web import page_render_child as child

    result = subprocess.run(
        [sys.executable, "-I", str(page_images._CHILD), "pdf", "1", "1440", "40000000"],
        input=text_pdf(1),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode != 0
    assert result.returncode in (child.OUT_OF_MEMORY, child.UNREADABLE) or (
        result.returncode < 0
    )
    assert result.stdout == b""


def _sleeper():
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "sleeper.py"
    path.write_text("import time\ntime.sleep(60)\n")
    return path


def test_viewer_role_is_enough_for_a_published_page(
    client, member, knowledge_base, other_knowledge_base
):
    published = _pdf_document(other_knowledge_base, text_pdf(1), published=True)
    someone = member(Role.VIEWER)  # a viewer of the other knowledge base only
    client.force_login(someone)
    assert client.get(_url(published)).status_code == 404
