"""The demo data set: two knowledge bases, three people, a few documents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from documents import services
from documents.models import Document, DocumentStatus, KnowledgeBase, Membership, Role
from ingestion.services import document_submit
from ingestion.worker import Worker

DEMO_FILES = Path(__file__).resolve().parent / "demo"

KNOWLEDGE_BASES = {
    "kb-company": "Company handbook and policies",
    "kb-engineering": "Engineering runbooks",
}
PEOPLE = {
    "alice": {"staff": False, "roles": {"kb-company": Role.EDITOR}},
    "bob": {
        "staff": False,
        "roles": {"kb-company": Role.EDITOR, "kb-engineering": Role.EDITOR},
    },
    "carol": {
        "staff": True,
        "roles": {"kb-company": Role.REVIEWER, "kb-engineering": Role.REVIEWER},
    },
}
DOCUMENTS = {
    "kb-company": [
        "employee-handbook.md",
        "差旅报销制度.md",
        "office-lease-scan.pdf",  # a scan without a text layer: read by OCR
        "regional-revenue-2026.xlsx",
    ],
    "kb-engineering": ["oncall-runbook.md", "部署规范.md", "incident-review-q3.pptx"],
}


class DemoSeeder:
    """Creates what is missing and leaves what exists alone (safe to run again)."""

    def __init__(self, report: Callable[[str], None] = print) -> None:
        self.report = report

    def run(self, *, with_documents: bool) -> list[Document]:
        with transaction.atomic():
            self.seed_knowledge_bases()
            self.seed_people()
        return self.seed_documents() if with_documents else []

    def seed_knowledge_bases(self) -> None:
        for kb_id, name in KNOWLEDGE_BASES.items():
            _, created = KnowledgeBase.objects.get_or_create(
                id=kb_id, defaults={"name": name}
            )
            self.report(f"knowledge base {kb_id}: {'created' if created else 'kept'}")

    def seed_people(self) -> None:
        User = get_user_model()
        for username, spec in PEOPLE.items():
            user, created = User.objects.get_or_create(
                username=username, defaults={"email": f"{username}@example.com"}
            )
            if created:
                # An existing account keeps its password: the demo must not
                # become a way to reset somebody's login.
                user.is_staff = spec["staff"]
                user.set_password(settings.DEMO_PASSWORD)
                user.save()
            for kb_id, role in spec["roles"].items():
                Membership.objects.update_or_create(
                    user=user, knowledge_base_id=kb_id, defaults={"role": role}
                )
            self.report(f"user {username}: {'created' if created else 'updated'}")

    def seed_documents(self) -> list[Document]:
        """Upload, ingest (in this process) and publish each sample document."""
        User = get_user_model()
        editor = User.objects.get(username="bob")
        reviewer = User.objects.get(username="carol")
        documents = []
        for kb_id, filenames in DOCUMENTS.items():
            for filename in filenames:
                document = Document.objects.filter(
                    knowledge_base_id=kb_id, filename=filename
                ).first()
                if document is None:
                    document = services.document_upload(
                        user=editor,
                        knowledge_base_id=kb_id,
                        uploaded_file=SimpleUploadedFile(
                            filename, (DEMO_FILES / filename).read_bytes()
                        ),
                    )
                document = self.publish(document, editor=editor, reviewer=reviewer)
                self.report(f"document {filename}: {document.status}")
                documents.append(document)
        return documents

    def publish(self, document: Document, *, editor, reviewer) -> Document:
        if document.status == DocumentStatus.DRAFT:
            task = document_submit(user=editor, document_id=document.pk)
            Worker(worker_id="seed-demo", write=lambda line: None).run(task.pk)
            document.refresh_from_db()
        if document.status == DocumentStatus.REVIEW_PENDING:
            document = services.document_publish(
                user=reviewer,
                document_id=document.pk,
                expected_lock_version=document.lock_version,
            )
        return document
