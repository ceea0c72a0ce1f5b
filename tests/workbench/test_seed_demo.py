from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from documents.models import Document, KnowledgeBase, Membership

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _development(settings):
    # The demo is for development; tests/security checks its refusal in production.
    settings.DEBUG = True


def roles() -> set[tuple[str, str, str]]:
    return set(
        Membership.objects.values_list("user__username", "knowledge_base_id", "role")
    )


def test_seed_demo_is_idempotent(settings):
    settings.DEMO_PASSWORD = "demo-pass-42"
    call_command("seed_demo")
    first = (roles(), Document.objects.count())
    call_command("seed_demo")

    assert (roles(), Document.objects.count()) == first
    assert set(KnowledgeBase.objects.values_list("id", flat=True)) == {
        "kb-company",
        "kb-engineering",
    }
    assert roles() == {
        ("alice", "kb-company", "editor"),
        ("bob", "kb-company", "editor"),
        ("bob", "kb-engineering", "editor"),
        ("carol", "kb-company", "reviewer"),
        ("carol", "kb-engineering", "reviewer"),
    }
    carol = get_user_model().objects.get(username="carol")
    assert carol.is_staff
    assert carol.check_password("demo-pass-42")
    documents = dict(Document.objects.values_list("filename", "status"))
    assert documents == {
        "employee-handbook.md": "published",
        "差旅报销制度.md": "published",
        "oncall-runbook.md": "published",
        "部署规范.md": "published",
        "office-lease-scan.pdf": "published",
        "regional-revenue-2026.xlsx": "published",
        "incident-review-q3.pptx": "published",
    }
    assert all(d.chunks.exists() for d in Document.objects.all())


def test_no_documents_flag():
    call_command("seed_demo", "--no-documents")
    assert KnowledgeBase.objects.count() == 2
    assert not Document.objects.exists()
