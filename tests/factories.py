from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from accounts.services import api_token_issue
from documents.models import Document, DocumentStatus, KnowledgeBase, Membership, Role
from ingestion.models import ErrorCode, TaskStatus


def api_token_for(user) -> str:
    """A new API token for `user`, as a login at `POST /api/auth/token` gives."""
    return api_token_issue(user=user).token


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "secret-pass-1")

    @factory.post_generation
    def save_password(self, create, extracted, **kwargs):
        if create:
            self.save()


class KnowledgeBaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = KnowledgeBase
        django_get_or_create = ("id",)

    id = factory.Sequence(lambda n: f"kb-{n}")
    name = factory.LazyAttribute(lambda kb: kb.id.replace("-", " ").title())


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    knowledge_base = factory.SubFactory(KnowledgeBaseFactory)
    role = Role.VIEWER


class DocumentFactory(factory.django.DjangoModelFactory):
    """A document with a real stored original; traits put it in any state."""

    class Meta:
        model = Document

    class Params:
        content = b"# Title\n\nSome text about the annual leave policy.\n"
        processing = factory.Trait(status=DocumentStatus.PROCESSING)
        review_pending = factory.Trait(status=DocumentStatus.REVIEW_PENDING)
        published = factory.Trait(status=DocumentStatus.PUBLISHED)
        archived = factory.Trait(status=DocumentStatus.ARCHIVED)
        failed = factory.Trait(status=DocumentStatus.FAILED)

    id = factory.LazyFunction(uuid.uuid4)
    knowledge_base = factory.SubFactory(KnowledgeBaseFactory)
    family_id = factory.LazyFunction(uuid.uuid4)
    version = 1
    filename = factory.Sequence(lambda n: f"note-{n}.md")
    content_type = "text/markdown"
    size_bytes = factory.LazyAttribute(lambda doc: len(doc.content))
    sha256 = factory.LazyAttribute(lambda doc: hashlib.sha256(doc.content).hexdigest())
    storage_key = factory.LazyAttribute(
        lambda doc: default_storage.save(
            f"originals/{doc.knowledge_base.id}/{doc.id}.md", ContentFile(doc.content)
        )
    )
    status = DocumentStatus.DRAFT
    created_by = factory.SubFactory(UserFactory)


class IngestionTaskFactory(factory.django.DjangoModelFactory):
    """A queued task; traits put it (and its document) in the other states with
    what a run leaves there: a claim and a lease, an error, a time to wait for."""

    class Meta:
        model = "ingestion.IngestionTask"

    class Params:
        # The document's state that goes with the task's; `document__status=` wins.
        document_status = DocumentStatus.PROCESSING
        running = factory.Trait(
            status=TaskStatus.RUNNING,
            attempt=1,
            worker_id="w-1",
            claim_token=factory.LazyFunction(uuid.uuid4),
            started_at=factory.LazyFunction(timezone.now),
            lease_expires_at=factory.LazyFunction(
                lambda: timezone.now() + timedelta(seconds=60)
            ),
        )
        retry_wait = factory.Trait(
            status=TaskStatus.RETRY_WAIT,
            attempt=1,
            error_code=ErrorCode.PROVIDER_UNAVAILABLE,
            available_at=factory.LazyFunction(
                lambda: timezone.now() + timedelta(seconds=60)
            ),
        )
        failed = factory.Trait(
            status=TaskStatus.FAILED,
            document_status=DocumentStatus.FAILED,
            attempt=1,
            error_code=ErrorCode.PARSE_ERROR,
            finished_at=factory.LazyFunction(timezone.now),
        )
        succeeded = factory.Trait(
            status=TaskStatus.SUCCEEDED,
            document_status=DocumentStatus.REVIEW_PENDING,
            attempt=1,
            finished_at=factory.LazyFunction(timezone.now),
        )

    document = factory.SubFactory(
        DocumentFactory, status=factory.SelfAttribute("..document_status")
    )
    status = TaskStatus.QUEUED


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "conversations.Conversation"

    owner = factory.SubFactory(UserFactory)
    title = "How many days of annual leave do I get?"


class ConversationTurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "conversations.ConversationTurn"

    conversation = factory.SubFactory(ConversationFactory)
    ordinal = factory.Sequence(lambda n: n + 1)
    question = "How many days of annual leave do I get?"
    resolved_question = factory.LazyAttribute(lambda turn: turn.question)
    answer = "Every full-time employee receives 25 days of paid annual leave."
    refused = False


class ChunkFactory(factory.django.DjangoModelFactory):
    """A chunk row; `chunks_of` lays out several as one document's text."""

    class Meta:
        model = "retrieval.Chunk"

    document = factory.SubFactory(DocumentFactory, review_pending=True)
    knowledge_base = factory.LazyAttribute(lambda chunk: chunk.document.knowledge_base)
    ordinal = factory.Sequence(lambda n: n)
    text = "Annual leave is 25 days."
    heading_path = factory.LazyFunction(list)
    page = None
    char_start = 0
    char_end = factory.LazyAttribute(lambda chunk: chunk.char_start + len(chunk.text))
    embedding = b"\0" * 8
    embedding_model = "test"


def chunks_of(document, passages) -> list:
    """One chunk per passage, offsets as in the document's full text (blocks joined
    by a blank line). A passage is a text or a (text, heading path, page) tuple."""
    chunks, offset = [], 0
    for ordinal, passage in enumerate(passages):
        text, heading, page = (
            (passage, (), None) if isinstance(passage, str) else passage
        )
        chunks.append(
            ChunkFactory(
                document=document,
                ordinal=ordinal,
                text=text,
                heading_path=list(heading),
                page=page,
                char_start=offset,
            )
        )
        offset += len(text) + 2
    return chunks
