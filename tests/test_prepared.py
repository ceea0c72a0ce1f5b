"""`core.prepared.PreparedRead`: the ORM's rows from SQL compiled once."""

from __future__ import annotations

import uuid

import pytest

from core.prepared import PreparedRead
from retrieval.models import Chunk
from tests.factories import ChunkFactory, DocumentFactory

pytestmark = pytest.mark.django_db

# Integers, a UUID, JSON, a date and time: values the backends convert.
FIELDS = (
    "id",
    "document_id",
    "heading_path",
    "page",
    "document__filename",
    "document__created_at",
)


class Counting:
    """A build function that counts how often a queryset is built."""

    def __init__(self, build) -> None:
        self.build = build
        self.calls = 0

    def __call__(self, *values):
        self.calls += 1
        return self.build(*values)


def by_ids(ids):
    return Chunk.objects.filter(pk__in=ids).order_by().values_list(*FIELDS)


def orm_rows(ids) -> list[tuple]:
    return sorted(by_ids(ids), key=str)


@pytest.fixture
def chunks(knowledge_base):
    return [
        ChunkFactory(
            document=DocumentFactory(
                knowledge_base=knowledge_base, filename=f"d{n}.md"
            ),
            heading_path=["Leave", f"Part {n}"],
            page=n or None,
        )
        for n in range(5)
    ]


def test_rows_equal_the_orms_converted_values_included(chunks):
    read = PreparedRead(by_ids, FIELDS)
    ids = [chunk.pk for chunk in chunks[:3]]
    others = [chunk.pk for chunk in chunks[2:]]

    for chosen in (ids, others, ids):  # the first compiles, the others reuse it
        rows = read.rows(chosen)
        assert sorted(map(tuple, rows), key=str) == orm_rows(chosen)
        assert {type(row.document_id) for row in rows} == {uuid.UUID}
        assert all(isinstance(row.heading_path, list) for row in rows)


def test_a_shape_is_compiled_once_then_run_as_one_query(
    chunks, django_assert_num_queries
):
    build = Counting(by_ids)
    read = PreparedRead(build, FIELDS)
    read.rows([chunks[0].pk, chunks[1].pk])
    built = build.calls

    with django_assert_num_queries(1):
        rows = read.rows([chunks[2].pk, chunks[3].pk])
    assert build.calls == built
    assert {row.document__filename for row in rows} == {"d2.md", "d3.md"}

    read.rows([chunks[4].pk])  # another length: compiled anew
    assert build.calls > built


def test_sql_whose_parameters_are_not_the_values_is_never_reused(chunks):
    def published_since(ids):  # a parameter of its own before the values
        return by_ids(ids).filter(ordinal__gte=0)

    build = Counting(published_since)
    read = PreparedRead(build, FIELDS)
    ids = [chunk.pk for chunk in chunks[:2]]
    read.rows(ids)
    built = build.calls

    rows = read.rows(ids)

    assert build.calls == built + 1  # evaluated as a queryset again
    assert sorted(map(tuple, rows), key=str) == orm_rows(ids)


def test_an_empty_list_reads_nothing(chunks, django_assert_num_queries):
    read = PreparedRead(by_ids, FIELDS)
    with django_assert_num_queries(0):
        assert read.rows([]) == []
