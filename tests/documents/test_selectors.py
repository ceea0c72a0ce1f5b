"""`documents/selectors.py`: who sees which knowledge base and document.

The same rules through the API are tested in `test_api_knowledge_bases.py` and
`test_api_documents.py`.
"""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import AnonymousUser

from core.errors import NotFound, PermissionDenied
from documents import selectors
from documents.models import Role
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(knowledge_base, other_knowledge_base):
    """One document in each state of the first knowledge base, and one elsewhere."""
    return {
        "draft": DocumentFactory(knowledge_base=knowledge_base),
        "review_pending": DocumentFactory(
            knowledge_base=knowledge_base, review_pending=True
        ),
        "published": DocumentFactory(knowledge_base=knowledge_base, published=True),
        "archived": DocumentFactory(knowledge_base=knowledge_base, archived=True),
        "elsewhere": DocumentFactory(
            knowledge_base=other_knowledge_base, published=True
        ),
    }


def visible(user, versions) -> set[str]:
    ids = set(selectors.documents_visible_to(user).values_list("pk", flat=True))
    return {name for name, document in versions.items() if document.pk in ids}


class TestKnowledgeBases:
    def test_each_of_the_callers_with_the_role_held_there(
        self, member, knowledge_base, other_knowledge_base
    ):
        user = member(Role.REVIEWER, username="mia")
        member(Role.VIEWER, kb=other_knowledge_base, username="mia")

        roles = {kb.pk: kb.role for kb in selectors.knowledge_bases_for(user)}

        assert roles == {"kb-company": Role.REVIEWER, "kb-other": Role.VIEWER}
        assert selectors.knowledge_base_ids_for(user) == ["kb-company", "kb-other"]
        assert selectors.knowledge_base_ids_for(user, minimum_role=Role.EDITOR) == [
            "kb-company"
        ]

    def test_anonymous_has_none(self, knowledge_base):
        anonymous = AnonymousUser()

        assert list(selectors.knowledge_bases_for(anonymous)) == []
        assert selectors.knowledge_base_ids_for(anonymous) == []
        assert selectors.role_in(anonymous, "kb-company") is None


class TestRequireRole:
    def test_the_role_held_when_it_is_enough(self, editor):
        assert selectors.require_role(editor, "kb-company", Role.VIEWER) == "editor"
        assert selectors.require_role(editor, "kb-company", Role.EDITOR) == "editor"

    def test_a_lower_role_is_told_which_role_it_needs(self, editor):
        with pytest.raises(PermissionDenied, match="needs the reviewer role"):
            selectors.require_role(editor, "kb-company", Role.REVIEWER)

    def test_a_non_member_cannot_tell_the_knowledge_base_exists(
        self, editor, other_knowledge_base
    ):
        with pytest.raises(NotFound):
            selectors.require_role(editor, "kb-other", Role.VIEWER)
        with pytest.raises(NotFound):
            selectors.require_role(editor, "kb-nowhere", Role.VIEWER)


class TestDocuments:
    def test_a_viewer_sees_only_the_published_versions(self, viewer, versions):
        assert visible(viewer, versions) == {"published"}

    @pytest.mark.parametrize("role", [Role.EDITOR, Role.REVIEWER])
    def test_editors_and_reviewers_see_every_version(self, member, versions, role):
        assert visible(member(role), versions) == {
            "draft",
            "review_pending",
            "published",
            "archived",
        }

    def test_a_draft_is_not_found_for_a_viewer_but_named_for_the_role_check(
        self, viewer, versions
    ):
        draft = versions["draft"]

        with pytest.raises(NotFound):
            selectors.visible_document(viewer, draft.pk)
        assert selectors.member_document(viewer, draft.pk) == draft

    def test_a_document_of_another_knowledge_base_is_not_found(
        self, reviewer, versions
    ):
        elsewhere = versions["elsewhere"].pk
        for find in (selectors.visible_document, selectors.member_document):
            with pytest.raises(NotFound):
                find(reviewer, elsewhere)
            with pytest.raises(NotFound):
                find(reviewer, uuid.uuid4())
