"""Lanes: light and heavy tasks, workers of one lane or both, and the queue of
each lane in `ingestion_status` and `/metrics`."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ingestion import claims
from ingestion.models import IngestionTask
from tests.factories import DocumentFactory, IngestionTaskFactory
from tests.ingestion.hostile import text_pages_pdf
from tests.ingestion.tasks import fresh
from tests.ingestion.test_metrics import samples
from tests.ingestion.test_ocr_ingestion import png, scanned_pdf

pytestmark = pytest.mark.django_db

LIGHT = frozenset({"light"})
HEAVY = frozenset({"heavy"})
PDF = "application/pdf"


@pytest.fixture
def upload(knowledge_base, submit):
    def make(content: bytes, filename: str, content_type: str) -> IngestionTask:
        document = DocumentFactory(
            knowledge_base=knowledge_base,
            content=content,
            filename=filename,
            content_type=content_type,
        )
        return submit(document)

    return make


def markdown(upload, n: int = 0) -> IngestionTask:
    return upload(
        f"# Note {n}\n\nLeave is {n} days.\n".encode(), "n.md", "text/markdown"
    )


class TestLaneAtSubmit:
    def test_text_and_small_files_start_light(self, upload):
        assert markdown(upload).lane == "light"
        assert upload(text_pages_pdf(["One page."]), "a.pdf", PDF).lane == "light"

    def test_an_image_is_read_by_ocr_so_it_is_heavy(self, upload):
        assert upload(png("Invoice 42"), "invoice.png", "image/png").lane == "heavy"

    def test_a_large_file_is_heavy(self, upload, settings):
        settings.INGESTION_LIGHT_MAX_BYTES = 20
        assert markdown(upload).lane == "heavy"


class TestClaimingByLane:
    def test_a_light_only_worker_never_claims_a_heavy_task(self, upload, run_worker):
        heavy = upload(png("Invoice 42"), "invoice.png", "image/png")
        light = [markdown(upload, n) for n in range(3)]

        stats, _ = run_worker(lanes=LIGHT)

        assert stats.claimed == 3
        assert {fresh(task).status for task in light} == {"succeeded"}
        row = fresh(heavy)
        assert (row.status, row.attempt, row.worker_id) == ("queued", 0, None)

    def test_the_claim_itself_refuses_a_task_outside_the_workers_lanes(self, upload):
        # Read as a candidate, then found heavy before the claim: the conditional
        # update carries the lanes, so the light worker does not win it.
        task = markdown(upload)
        [candidate] = claims.claimable_tasks(1, lanes=LIGHT)
        IngestionTask.objects.filter(pk=task.pk).update(lane="heavy")

        assert (
            claims.ingestion_task_claim_candidate(candidate, worker_id="w", lanes=LIGHT)
            is None
        )
        assert claims.claimable_tasks(1, lanes=LIGHT) == []
        assert fresh(task).status == "queued"
        won = claims.ingestion_task_claim_candidate(candidate, worker_id="w")
        assert won is not None

    def test_a_heavy_only_worker_leaves_the_light_tasks(self, upload, run_worker):
        heavy = upload(png("Invoice 42"), "invoice.png", "image/png")
        light = markdown(upload)

        stats, _ = run_worker(lanes=HEAVY)

        assert stats.claimed == 1
        assert fresh(heavy).status == "succeeded"
        assert fresh(light).status == "queued"

    def test_claim_order_holds_within_a_lane(self, upload):
        first, second = markdown(upload, 1), markdown(upload, 2)
        upload(png("Invoice 42"), "invoice.png", "image/png")

        ids = [c.task_id for c in claims.claimable_tasks(5, lanes=LIGHT)]

        assert ids == [first.pk, second.pk]


class TestLaneFoundByTheFirstRun:
    def test_a_light_only_worker_gives_back_a_pdf_that_turns_out_scanned(
        self, upload, run_worker
    ):
        task = upload(scanned_pdf("The lease runs for five years"), "s.pdf", PDF)
        assert task.lane == "light"  # nothing at submit says it is a scan

        stats, lines = run_worker(lanes=LIGHT)

        row = fresh(task)
        assert (stats.rerouted, row.status, row.lane) == (1, "queued", "heavy")
        assert (row.attempt, row.worker_id, row.work_ocr_pages) == (0, None, 0)
        assert any(line.startswith(f"rerouted task={task.pk}") for line in lines)
        stats, _ = run_worker(lanes=LIGHT)
        assert stats.claimed == 0

        run_worker(lanes=HEAVY)

        row = fresh(task)
        assert (row.status, row.attempt, row.work_ocr_pages) == ("succeeded", 1, 1)

    def test_a_worker_of_both_lanes_records_the_lane_and_goes_on(
        self, upload, run_worker
    ):
        task = upload(scanned_pdf("Rent is due monthly"), "s.pdf", PDF)

        stats, _ = run_worker()

        row = fresh(task)
        assert (stats.rerouted, row.status, row.lane) == (0, "succeeded", "heavy")

    def test_a_pdf_of_many_pages_is_heavy(self, upload, run_worker, settings):
        settings.INGESTION_LIGHT_MAX_PAGES = 3
        long = upload(text_pages_pdf([f"Page {n}." for n in range(4)]), "l.pdf", PDF)
        short = upload(text_pages_pdf([f"Page {n}." for n in range(3)]), "s.pdf", PDF)

        stats, _ = run_worker(lanes=LIGHT)

        assert (fresh(long).status, fresh(long).lane) == ("queued", "heavy")
        assert (fresh(short).status, fresh(short).lane) == ("succeeded", "light")
        assert stats.rerouted == 1

    def test_a_rerouted_task_keeps_its_turn(self, upload, run_worker):
        scan = upload(scanned_pdf("Rent is due monthly"), "s.pdf", PDF)
        turn = scan.turn

        run_worker(lanes=LIGHT)

        assert fresh(scan).turn == turn


def test_worker_lanes_option_is_checked():
    with pytest.raises(CommandError, match="lanes are a comma-separated list"):
        call_command("run_ingestion_worker", "--lanes", "fast")


@pytest.fixture
def lanes_queue(knowledge_base):
    """Per lane: claimable tasks waiting since known times, one running, and
    tasks claimed lately after known waits."""
    now = timezone.now()

    def task(**fields):
        return IngestionTaskFactory(document__knowledge_base=knowledge_base, **fields)

    task(lane="light", available_at=now - timedelta(seconds=4))
    task(lane="heavy", available_at=now - timedelta(seconds=300))
    task(lane="heavy", available_at=now - timedelta(seconds=30))
    task(lane="heavy", running=True, available_at=now - timedelta(seconds=70))
    for lane, waits in (("light", [0.2, 0.4, 1.0, 3.0]), ("heavy", [50.0, 60.0])):
        for wait in waits:
            task(
                lane=lane,
                succeeded=True,
                available_at=now - timedelta(seconds=100 + wait),
                started_at=now - timedelta(seconds=100),
                finished_at=now - timedelta(seconds=90),
            )
    return now


def test_status_shows_depth_and_wait_per_lane(lanes_queue):
    out = StringIO()
    call_command("ingestion_status", "--json", stdout=out)
    lanes = json.loads(out.getvalue())["lanes"]

    assert lanes["light"] == {
        "depth": 1,
        "running": 0,
        "oldest_wait_seconds": pytest.approx(4, abs=2),
        "wait_p50_seconds": 1.0,
        "wait_p95_seconds": 3.0,
        "claimed_last_24h": 4,
    }
    assert lanes["heavy"]["depth"] == 2
    assert lanes["heavy"]["running"] == 1
    assert lanes["heavy"]["oldest_wait_seconds"] == pytest.approx(300, abs=2)
    assert lanes["heavy"]["claimed_last_24h"] == 3  # the running one too
    out = StringIO()
    call_command("ingestion_status", stdout=out)
    assert "  light  claimable=1 running=0 oldest=4" in out.getvalue()


def test_metrics_show_depth_and_wait_per_lane(client, settings, lanes_queue):
    settings.METRICS_PUBLIC = True

    values = samples(client.get("/metrics"))

    assert values[("curator_ingestion_lane_depth", (("lane", "light"),))] == 1
    assert values[("curator_ingestion_lane_depth", (("lane", "heavy"),))] == 2
    oldest = values[
        ("curator_ingestion_lane_oldest_wait_seconds", (("lane", "heavy"),))
    ]
    assert oldest == pytest.approx(300, abs=2)
    waited = "curator_ingestion_queue_wait_seconds_bucket"
    assert values[(waited, (("lane", "light"), ("le", "0.5")))] == 2
    assert values[(waited, (("lane", "light"), ("le", "5.0")))] == 4
    assert values[(waited, (("lane", "heavy"), ("le", "30.0")))] == 0
    assert values[(waited, (("lane", "heavy"), ("le", "60.0")))] == 2
    assert (
        values[("curator_ingestion_queue_wait_seconds_count", (("lane", "heavy"),))]
        == 3
    )
