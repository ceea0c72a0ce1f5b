"""One editor's flood of uploads cannot starve everyone else's.

Tasks take turns by submitter (`ingestion.enqueue.next_turn`): a submitter's
k-th waiting task goes after every other submitter's (k-1)-th, so a document
queued behind a flood is claimed next, by one worker or by several, while the
claim stays one conditional UPDATE.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from documents.models import Role
from ingestion import claims, services
from ingestion.models import IngestionTask, TaskStatus
from tests.factories import DocumentFactory
from tests.ingestion.processes import Process, slow_worker_env

TEXT = b"# Leave\n\nEvery employee receives 25 days of annual leave.\n"


@pytest.fixture
def alice(member, knowledge_base):
    """The flooding editor, in the first knowledge base."""
    return member(Role.EDITOR, kb=knowledge_base, username="alice")


@pytest.fixture
def bob(member, other_knowledge_base):
    """Another editor, in another knowledge base."""
    return member(Role.EDITOR, kb=other_knowledge_base, username="bob")


def queue(user, knowledge_base, count: int = 1) -> list[IngestionTask]:
    """Upload-and-submit `count` drafts as `user`, the way the API does."""
    return [
        services.document_submit(
            user=user,
            document_id=DocumentFactory(
                knowledge_base=knowledge_base, content=TEXT, created_by=user
            ).pk,
        )
        for _ in range(count)
    ]


def claim_order(limit: int = 100) -> list:
    return [candidate.task_id for candidate in claims.claimable_tasks(limit)]


def ids(tasks) -> list:
    return [task.pk for task in tasks]


@pytest.mark.django_db
class TestClaimOrder:
    def test_submitters_take_turns(
        self, alice, bob, member, knowledge_base, other_knowledge_base
    ):
        carol = member(Role.EDITOR, kb=knowledge_base, username="carol")
        a1, a2, a3 = queue(alice, knowledge_base, 3)
        b1, b2 = queue(bob, other_knowledge_base, 2)
        (c1,) = queue(carol, knowledge_base)

        assert claim_order() == ids([a1, b1, c1, a2, b2, a3])

    def test_one_submitter_is_first_in_first_out(self, alice, knowledge_base):
        tasks = queue(alice, knowledge_base, 5)

        assert claim_order() == ids(tasks)

    def test_a_late_upload_behind_a_flood_is_claimed_second(
        self, alice, bob, knowledge_base, other_knowledge_base
    ):
        flood = queue(alice, knowledge_base, 60)
        (late,) = queue(bob, other_knowledge_base)

        assert claim_order(2) == [flood[0].pk, late.pk]

    def test_a_late_upload_waits_at_most_for_the_turn_served_now(
        self, alice, bob, knowledge_base, other_knowledge_base
    ):
        flood = queue(alice, knowledge_base, 6)
        for task in flood[:4]:
            assert claims.ingestion_task_claim(task.pk, worker_id="w")
        (late,) = queue(bob, other_knowledge_base)

        # Four of Alice's run; her fifth is the turn served now, then Bob's.
        assert claim_order() == ids([flood[4], late, flood[5]])

    def test_a_released_task_waits_behind_its_submitters_queue(
        self, alice, bob, knowledge_base, other_knowledge_base
    ):
        a1, a2 = queue(alice, knowledge_base, 2)
        (b1,) = queue(bob, other_knowledge_base)
        claim = claims.ingestion_task_claim(a1.pk, worker_id="w")

        assert claims.ingestion_task_release(claim)

        assert claim_order() == ids([b1, a2, a1])

    def test_a_backed_off_task_waits_behind_its_submitters_queue(
        self, alice, bob, knowledge_base, other_knowledge_base
    ):
        a1, a2 = queue(alice, knowledge_base, 2)
        (b1,) = queue(bob, other_knowledge_base)
        claim = claims.ingestion_task_claim(a1.pk, worker_id="w")

        status = claims.ingestion_task_report_failure(
            claim, error_code="object_read_error", detail="storage down"
        )

        assert status == TaskStatus.RETRY_WAIT
        assert claim_order() == ids([b1, a2])  # not before its backoff ends
        IngestionTask.objects.filter(pk=a1.pk).update(
            available_at=timezone.now() - timedelta(seconds=1)
        )
        assert claim_order() == ids([b1, a2, a1])

    def test_a_retry_is_queued_for_the_person_who_asked(
        self, alice, member, knowledge_base
    ):
        dora = member(Role.EDITOR, kb=knowledge_base, username="dora")
        (failed,) = queue(alice, knowledge_base)
        claim = claims.ingestion_task_claim(failed.pk, worker_id="w")
        claims.ingestion_task_fail(claim, error_code="parse_error", detail="bad")
        a2, a3 = queue(alice, knowledge_base, 2)

        services.ingestion_task_retry(user=dora, task_id=failed.pk)

        assert IngestionTask.objects.get(pk=failed.pk).submitted_by == dora
        assert claim_order() == ids([a2, failed, a3])

    def test_a_claim_is_still_won_once(self, alice, knowledge_base):
        queue(alice, knowledge_base)
        [candidate] = claims.claimable_tasks(1)

        first = claims.ingestion_task_claim_candidate(candidate, worker_id="one")
        second = claims.ingestion_task_claim_candidate(candidate, worker_id="two")

        assert first is not None
        assert first.submitted_by_id == alice.pk
        assert second is None


def worker(process_env, name: str, *, delay: float | None = None) -> Process:
    return Process(
        process_env,
        "run_ingestion_worker",
        "--worker-id",
        name,
        **({} if delay is None else slow_worker_env(delay)),
    )


def finished_before(task, others) -> int:
    """How many of `others` finished before `task` did."""
    done = IngestionTask.objects.get(pk=task.pk)
    assert done.status == TaskStatus.SUCCEEDED
    return IngestionTask.objects.filter(
        pk__in=ids(others), finished_at__lt=done.finished_at
    ).count()


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
class TestRealWorkers:
    """Parsing is slowed down (1 s a document) in the worker processes, as a
    flood of hostile files would make it."""

    def test_two_workers_take_the_late_upload_before_the_flood_drains(
        self, alice, bob, knowledge_base, other_knowledge_base, process_env
    ):
        flood = queue(alice, knowledge_base, 6)
        (late,) = queue(bob, other_knowledge_base)

        workers = [worker(process_env, f"w{n}", delay=1.0) for n in range(2)]
        for process in workers:
            assert process.stop(timeout=120) == 0, process.stderr

        assert finished_before(late, flood) <= 2
        assert set(IngestionTask.objects.values_list("status", "attempt")) == {
            (TaskStatus.SUCCEEDED, 1)
        }

    def test_a_lone_worker_takes_the_late_upload_next(
        self, alice, bob, knowledge_base, other_knowledge_base, process_env
    ):
        flood = queue(alice, knowledge_base, 4)
        (late,) = queue(bob, other_knowledge_base)

        process = worker(process_env, "lone", delay=1.0)
        assert process.stop(timeout=120) == 0, process.stderr

        assert finished_before(late, flood) == 1  # the flood's first was older

    def test_concurrent_workers_claim_every_submitters_tasks_exactly_once(
        self, alice, bob, member, knowledge_base, other_knowledge_base, process_env
    ):
        carol = member(Role.EDITOR, kb=knowledge_base, username="carol")
        tasks = [
            *queue(alice, knowledge_base, 12),
            *queue(bob, other_knowledge_base, 12),
            *queue(carol, knowledge_base, 12),
        ]

        workers = [worker(process_env, f"p{n}") for n in range(3)]
        for process in workers:
            assert process.stop(timeout=300) == 0, process.stderr

        claimed = [
            line.split()[1]
            for process in workers
            for line in process.lines
            if line.startswith("claimed ")
        ]
        assert sorted(claimed) == sorted(f"task={task.pk}" for task in tasks)
        assert set(IngestionTask.objects.values_list("status", "attempt")) == {
            (TaskStatus.SUCCEEDED, 1)
        }
