"""`documents/services.py`: uploading, publishing and rejecting document versions.

The same writes through the API are tested in `test_api_upload.py` and
`test_api_documents.py`; who may publish what in
`tests/security/test_separation_of_duties.py`.
"""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import (
    NotFound,
    PermissionDenied,
    SeparationOfDuties,
    StaleVersion,
    ValidationFailed,
)
from documents import services
from documents.models import Document, DocumentStatus, KnowledgeBase
from documents.uploads import EmptyDocument
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db

LEAVE = b"# Leave\n\nEvery employee receives 25 days of annual leave.\n"


def upload(user, name: str = "leave.md", content: bytes = LEAVE, **options):
    return services.document_upload(
        user=user,
        knowledge_base_id="kb-company",
        uploaded_file=SimpleUploadedFile(name, content),
        **options,
    )


def originals() -> set[str]:
    if not default_storage.exists("originals/kb-company"):
        return set()
    return set(default_storage.listdir("originals/kb-company")[1])


def status_of(document) -> str:
    return Document.objects.values_list("status", flat=True).get(pk=document.pk)


class TestUpload:
    def test_the_original_is_stored_and_a_draft_created(self, editor, knowledge_base):
        document = upload(editor, "../../Leave Policy.md")

        assert document.status == DocumentStatus.DRAFT
        assert (document.knowledge_base_id, document.created_by) == (
            "kb-company",
            editor,
        )
        assert (document.filename, document.content_type, document.version) == (
            "Leave Policy.md",
            "text/markdown",
            1,
        )
        assert document.size_bytes == len(LEAVE)
        assert document.sha256 == hashlib.sha256(LEAVE).hexdigest()
        # The key is the server's, whatever the file was called.
        assert document.storage_key == f"originals/kb-company/{document.pk}.md"
        with default_storage.open(document.storage_key) as stored:
            assert stored.read() == LEAVE

    def test_a_new_version_of_a_family_takes_the_next_number(
        self, editor, knowledge_base
    ):
        first = upload(editor)
        second = upload(editor, family_id=first.family_id)
        third = upload(editor, family_id=first.family_id, version=7)

        assert (second.family_id, second.version) == (first.family_id, 2)
        assert (third.family_id, third.version) == (first.family_id, 7)

    def test_a_version_that_exists_is_refused_before_anything_is_stored(
        self, editor, knowledge_base
    ):
        first = upload(editor)
        stored = originals()

        with pytest.raises(services.VersionConflict):
            upload(editor, family_id=first.family_id, version=1)

        assert Document.objects.count() == 1
        assert originals() == stored

    def test_a_family_of_another_knowledge_base_is_refused(
        self, editor, knowledge_base, other_knowledge_base
    ):
        elsewhere = DocumentFactory(knowledge_base=other_knowledge_base)

        with pytest.raises(ValidationFailed):
            upload(editor, family_id=elsewhere.family_id)

    def test_a_viewer_cannot_upload_and_a_non_member_learns_nothing(
        self, viewer, member, other_knowledge_base
    ):
        outsider = member(kb=other_knowledge_base, username="olga")

        with pytest.raises(PermissionDenied):
            upload(viewer)
        with pytest.raises(NotFound):
            upload(outsider)
        assert not Document.objects.exists()

    @pytest.mark.parametrize("content", [b"", b" \n\t\r\n"])
    def test_an_empty_or_blank_text_is_refused(self, editor, knowledge_base, content):
        with pytest.raises(EmptyDocument):
            upload(editor, content=content)
        assert not Document.objects.exists()


class TestPublish:
    def test_the_previous_version_is_archived_and_the_index_moves_on(
        self, reviewer, knowledge_base
    ):
        old = DocumentFactory(knowledge_base=knowledge_base, published=True)
        new = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=old.family_id,
            version=2,
            review_pending=True,
        )
        index_version = knowledge_base.index_version

        published = services.document_publish(
            user=reviewer, document_id=new.pk, expected_lock_version=new.lock_version
        )

        assert published.status == DocumentStatus.PUBLISHED
        assert published.published_at is not None
        assert published.lock_version == new.lock_version + 1
        assert status_of(old) == DocumentStatus.ARCHIVED
        knowledge_base.refresh_from_db()
        assert knowledge_base.index_version == index_version + 1

    def test_a_stale_lock_version_changes_nothing(self, reviewer, knowledge_base):
        old = DocumentFactory(knowledge_base=knowledge_base, published=True)
        new = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=old.family_id,
            version=2,
            review_pending=True,
        )

        with pytest.raises(StaleVersion):
            services.document_publish(
                user=reviewer,
                document_id=new.pk,
                expected_lock_version=new.lock_version + 1,
            )

        # The archive of the old version went back with the refused publish.
        assert (status_of(old), status_of(new)) == (
            DocumentStatus.PUBLISHED,
            DocumentStatus.REVIEW_PENDING,
        )
        assert KnowledgeBase.objects.get(pk=knowledge_base.pk).index_version == (
            knowledge_base.index_version
        )

    def test_the_uploader_must_leave_publishing_to_another_reviewer(
        self, reviewer, knowledge_base, settings
    ):
        settings.REVIEW_REQUIRE_SECOND_PERSON = True
        own = DocumentFactory(
            knowledge_base=knowledge_base, created_by=reviewer, review_pending=True
        )

        with pytest.raises(SeparationOfDuties):
            services.document_publish(
                user=reviewer, document_id=own.pk, expected_lock_version=0
            )
        assert status_of(own) == DocumentStatus.REVIEW_PENDING

    def test_second_person_required_follows_the_setting_and_the_uploader(
        self, reviewer, editor, knowledge_base, settings
    ):
        own = DocumentFactory(knowledge_base=knowledge_base, created_by=reviewer)
        others = DocumentFactory(knowledge_base=knowledge_base, created_by=editor)
        orphan = DocumentFactory(knowledge_base=knowledge_base, created_by=None)

        settings.REVIEW_REQUIRE_SECOND_PERSON = True
        assert services.second_person_required(user=reviewer, document=own)
        assert not services.second_person_required(user=reviewer, document=others)
        assert not services.second_person_required(user=reviewer, document=orphan)
        settings.REVIEW_REQUIRE_SECOND_PERSON = False
        assert not services.second_person_required(user=reviewer, document=own)


class TestReject:
    def test_back_to_draft_with_the_reason(self, reviewer, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

        rejected = services.document_reject(
            user=reviewer,
            document_id=document.pk,
            expected_lock_version=document.lock_version,
            reason="  Section 2 has last year's numbers. ",
        )

        assert rejected.status == DocumentStatus.DRAFT
        assert rejected.review_note == "Section 2 has last year's numbers."
        assert rejected.lock_version == document.lock_version + 1

    @pytest.mark.parametrize("reason", ["", "   \n"])
    def test_a_rejection_needs_a_reason(self, reviewer, knowledge_base, reason):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

        with pytest.raises(ValidationFailed):
            services.document_reject(
                user=reviewer,
                document_id=document.pk,
                expected_lock_version=document.lock_version,
                reason=reason,
            )
        assert status_of(document) == DocumentStatus.REVIEW_PENDING

    def test_an_editor_cannot_reject(self, editor, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

        with pytest.raises(PermissionDenied):
            services.document_reject(
                user=editor,
                document_id=document.pk,
                expected_lock_version=document.lock_version,
                reason="Not mine to judge.",
            )
        assert status_of(document) == DocumentStatus.REVIEW_PENDING
