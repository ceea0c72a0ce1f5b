"""A publish committed before `searcher()` is found, in this process and in
another one; an archived version is never served again, not even after a
restart."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from retrieval.embeddings import get_embedder
from retrieval.tokens import query_tokens
from tests.conftest import REPO

pytestmark = pytest.mark.django_db

LEAVE = ["Every employee receives 25 days of paid annual leave per year."]
LEAVE_2 = ["Every employee receives 28 days of paid annual leave."]
HOTEL = ["Hotel costs are refunded up to 150 euros a night.", "酒店住宿凭发票报销。"]


def found(backend, question: str, kb_ids=("kb-company",)) -> set[int]:
    """The chunks found by keyword, by vector, and counted by the statistics."""
    searcher = backend.searcher(list(kb_ids))
    terms = query_tokens(question)
    vector = get_embedder().embed_queries([question])[0]
    by_keyword = {c.chunk_id for c in searcher.keyword(terms, 50)}
    by_vector = {c.chunk_id for c in searcher.nearest(vector, 50)}
    return by_keyword | by_vector


def test_a_publish_is_found_by_the_next_searcher(backend, library):
    library.published("kb-company", LEAVE)
    assert found(backend, "annual leave")  # searched once: the backend is warm
    before = backend.searcher(["kb-company"]).statistics.size

    hotel = library.published("kb-company", HOTEL)

    assert library.chunk_ids(hotel) <= found(backend, "hotel costs 酒店")
    assert backend.searcher(["kb-company"]).statistics.size == before + 2


def test_a_new_version_replaces_the_old_one(backend, library):
    first = library.published("kb-company", LEAVE)
    assert library.chunk_ids(first) <= found(backend, "annual leave")

    second = library.published("kb-company", LEAVE_2, family_id=first.family_id)

    assert found(backend, "annual leave days") == library.chunk_ids(second)
    assert backend.searcher(["kb-company"]).statistics.frequency("25") == 0


def test_an_archived_version_is_never_served_again(
    backend, backend_under_test, library
):
    leave = library.published("kb-company", LEAVE)
    hotel = library.published("kb-company", HOTEL)
    assert library.chunk_ids(leave) <= found(backend, "annual leave")

    library.archive(leave)

    for serving in (backend, backend_under_test.started()):  # and after a restart
        assert found(serving, "annual leave days") <= library.chunk_ids(hotel)
        statistics = serving.searcher(["kb-company"]).statistics
        assert statistics.frequency("leave") == 0
        assert statistics.size == 2


def test_it_is_ready_once_it_has_answered(backend, library):
    library.published("kb-company", LEAVE)
    assert found(backend, "annual leave")

    assert backend.health().status == "ready"


QUESTION = "annual leave hotel 酒店"
# Another process: for each question read, the chunk ids it finds by keyword.
SEARCHING = """
import json, sys
from retrieval.search_backends import get_search_backend
from retrieval.tokens import query_tokens
backend = get_search_backend()
for line in sys.stdin:
    searcher = backend.searcher(["kb-company"])
    hits = searcher.keyword(query_tokens(line), 50)
    print("hits", json.dumps(sorted(c.chunk_id for c in hits)), flush=True)
"""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # the other process reads what is committed
def test_a_publish_is_found_by_another_process_on_its_next_query(
    backend, backend_under_test, library, process_env, settings
):
    process_env["SEARCH_BACKEND"] = backend_under_test.path
    process_env["SEARCH_SNAPSHOT_DIR"] = settings.SEARCH_SNAPSHOT_DIR
    leave = library.published("kb-company", LEAVE)
    other = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "shell", "-c", SEARCHING],
        cwd=REPO,
        env=process_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def ask(question: str) -> set[int]:
        other.stdin.write(question + "\n")
        other.stdin.flush()
        line = other.stdout.readline()
        while not line.startswith("hits "):  # the shell's own output first
            assert line, "the other process ended"
            line = other.stdout.readline()
        return set(json.loads(line.removeprefix("hits ")))

    try:
        assert ask(QUESTION) == library.chunk_ids(leave)
        hotel = library.published("kb-company", HOTEL)
        assert ask(QUESTION) == library.chunk_ids(leave) | library.chunk_ids(hotel)
        library.archive(leave)
        assert ask(QUESTION) == library.chunk_ids(hotel)
    finally:
        other.stdin.close()
        assert other.wait(60) == 0
