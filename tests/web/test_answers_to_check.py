"""/review/answers/: the not-helpful answers, for their knowledge bases' reviewers."""

from __future__ import annotations

import pytest
from django.test import Client

from conversations.feedback import answer_feedback_create
from documents.models import Role
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def feedback(member, knowledge_base, other_knowledge_base):
    asker = member(Role.VIEWER, username="asker")
    member(Role.VIEWER, kb=other_knowledge_base, username="asker")
    for kb, question, comment in [
        (knowledge_base, "How much leave do I get?", "It forgot part-timers."),
        (other_knowledge_base, "Secret other question?", ""),
    ]:
        document = DocumentFactory(knowledge_base=kb, published=True)
        answer_feedback_create(
            user=asker,
            question=question,
            answer=f"An answer to {question}[S1]",
            helpful=False,
            comment=comment,
            sources=[
                {
                    "id": "S1",
                    "document_id": document.pk,
                    "page": 4,
                    "heading_path": ["Leave"],
                    "excerpt": "Annual leave is 25 days.",
                }
            ],
        )


def test_a_reviewer_sees_their_knowledge_bases_not_helpful_answers(feedback, reviewer):
    response = signed_in(reviewer).get("/review/answers/")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('data-testid="answer-to-check"') == 1
    assert "How much leave do I get?" in page
    assert "It forgot part-timers." in page
    assert "Secret other question" not in page
    assert "/sources/" in page
    assert "page=4" in page
    assert "Answers to check" in page
    # Its "[S1]" reads as the number of the source listed under it.
    assert "An answer to How much leave do I get? [1]</div>" in page


def test_the_nav_links_it_for_reviewers_only(reviewer, viewer):
    assert b"/review/answers/" in signed_in(reviewer).get("/").content
    assert b"/review/answers/" not in signed_in(viewer).get("/").content


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
def test_others_are_refused(feedback, member, role):
    user = member(role, username=f"not-a-reviewer-{role}")
    response = signed_in(user).get("/review/answers/")
    assert response.status_code == 403
    assert b"How much leave" not in response.content
    assert b'data-testid="forbidden"' in response.content


def test_no_feedback_says_so(reviewer):
    page = signed_in(reviewer).get("/review/answers/").content.decode()
    assert 'data-testid="no-answers-to-check"' in page


def test_anonymous_is_sent_to_sign_in(client):
    response = client.get("/review/answers/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/review/answers/"
