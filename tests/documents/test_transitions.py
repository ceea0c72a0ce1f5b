from __future__ import annotations

import itertools

import pytest

from core.errors import InvalidTransition, NotFound, StaleVersion
from documents.models import Document, DocumentStatus
from documents.transitions import DOCUMENT_TRANSITIONS, transition_document
from tests.factories import DocumentFactory

EXPECTED = {
    ("draft", "submit"): "processing",
    ("processing", "ingest_succeed"): "review_pending",
    ("processing", "ingest_fail"): "failed",
    ("processing", "cancel"): "draft",
    ("failed", "retry"): "processing",
    ("review_pending", "publish"): "published",
    ("review_pending", "reject"): "draft",
    ("published", "archive"): "archived",
}
PAIRS = list(itertools.product(DocumentStatus.values, DOCUMENT_TRANSITIONS))


def test_table_is_exactly_the_documented_graph():
    table = {
        (source, action): transition.target
        for action, transition in DOCUMENT_TRANSITIONS.items()
        for source in transition.sources
    }
    assert table == EXPECTED


@pytest.mark.django_db
@pytest.mark.parametrize(("state", "action"), PAIRS)
def test_every_state_action_pair(state, action):
    document = DocumentFactory(status=state, lock_version=3)
    expected_target = EXPECTED.get((state, action))

    if expected_target is None:
        with pytest.raises(InvalidTransition):
            transition_document(document.pk, action)
        document.refresh_from_db()
        assert document.status == state
        assert document.lock_version == 3
    else:
        moved = transition_document(document.pk, action)
        assert moved.status == expected_target
        assert moved.lock_version == 4
        document.refresh_from_db()
        assert document.status == expected_target


@pytest.mark.django_db
def test_stale_lock_version_changes_nothing():
    document = DocumentFactory(review_pending=True, lock_version=5)
    with pytest.raises(StaleVersion):
        transition_document(document.pk, "publish", expected_lock_version=4)
    document.refresh_from_db()
    assert (document.status, document.lock_version) == ("review_pending", 5)


@pytest.mark.django_db
def test_matching_lock_version_applies():
    document = DocumentFactory(review_pending=True, lock_version=5)
    moved = transition_document(document.pk, "publish", expected_lock_version=5)
    assert (moved.status, moved.lock_version) == ("published", 6)


@pytest.mark.django_db
def test_missing_document_is_not_found():
    import uuid

    with pytest.raises(NotFound):
        transition_document(uuid.uuid4(), "submit")
    assert not Document.objects.exists()
