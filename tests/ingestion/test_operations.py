"""Operator commands: `ingestion_status` and `prune_ingestion_tasks`."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ingestion.models import IngestionTask, OutboxEvent
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db


def call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def busy_queue(knowledge_base):
    now = timezone.now()

    def task(**fields):
        return IngestionTaskFactory(document__knowledge_base=knowledge_base, **fields)

    task(status="queued", available_at=now - timedelta(minutes=10))
    task(status="queued", available_at=now - timedelta(minutes=2))
    task(retry_wait=True, available_at=now + timedelta(minutes=1))
    running = task(
        running=True,
        stage="embedding",
        completed=3,
        total=9,
        attempt=2,
        worker_id="w-1",
        started_at=now,
        lease_expires_at=now + timedelta(seconds=40),
    )
    stuck = task(
        running=True,
        stage="parse",
        worker_id="w-dead",
        started_at=now - timedelta(minutes=5),
        lease_expires_at=now - timedelta(seconds=90),
    )
    for code, hours in [
        ("parse_error", 1),
        ("parse_error", 3),
        ("file_too_large", 5),
        ("lease_expired", 48),  # older than a day: not counted
    ]:
        task(failed=True, error_code=code, finished_at=now - timedelta(hours=hours))
    task(succeeded=True, finished_at=now)
    OutboxEvent.objects.create(topic="t", payload={})
    return running, stuck


def test_status_as_json(busy_queue):
    running, stuck = busy_queue

    status = json.loads(call("ingestion_status", "--json"))

    assert status["tasks_by_status"] == {
        "queued": 2,
        "running": 2,
        "succeeded": 1,
        "failed": 4,
        "cancelled": 0,
        "retry_wait": 1,
    }
    assert 595 <= status["oldest_queued_age_seconds"] <= 700
    assert status["failures_last_24h_by_error_code"] == {
        "parse_error": 2,
        "file_too_large": 1,
    }
    assert status["outbox_undelivered"] == 1
    by_id = {task["task_id"]: task for task in status["running"]}
    assert by_id[str(running.pk)] == {
        "task_id": str(running.pk),
        "document_id": str(running.document_id),
        "worker_id": "w-1",
        "lane": "light",
        "attempt": 2,
        "stage": "embedding",
        "completed": 3,
        "total": 9,
        "lease_expires_in_seconds": pytest.approx(40, abs=10),
    }
    assert by_id[str(stuck.pk)]["lease_expires_in_seconds"] < -60


def test_status_for_people(busy_queue):
    running, stuck = busy_queue

    text = call("ingestion_status")

    assert "  queued       2" in text
    assert "Oldest queued: 6" in text  # 600 s and a little
    assert f"  {running.pk} worker=w-1 attempt=2 embedding 3/9 lease " in text
    assert f"  {stuck.pk} worker=w-dead" in text
    assert "lease expired 9" in text
    assert "  parse_error            2" in text
    assert "lease_expired" not in text.split("Failures")[1]
    assert "Outbox events not yet delivered: 1" in text


def test_status_of_an_empty_queue():
    text = call("ingestion_status")
    assert "Oldest queued: -" in text
    assert "Running (0)" in text
    assert "Failures in the last 24 h: none" in text


class TestPrune:
    def test_old_finished_tasks_and_delivered_events_go(self, knowledge_base):
        now = timezone.now()
        old = now - timedelta(days=40)
        document = DocumentFactory(knowledge_base=knowledge_base, processing=True)
        history = [
            IngestionTaskFactory(
                document=document,
                status=status,
                finished_at=old,
                created_at=old + timedelta(minutes=n),
            )
            for n, status in enumerate(["failed", "cancelled", "succeeded"])
        ]
        latest = IngestionTaskFactory(
            document=document,
            status="failed",
            finished_at=old,
            created_at=old + timedelta(hours=1),
        )
        recent = IngestionTaskFactory(
            document__knowledge_base=knowledge_base,
            status="succeeded",
            finished_at=now - timedelta(days=1),
            created_at=now - timedelta(days=2),
        )
        IngestionTaskFactory(
            document=recent.document,
            status="queued",
            created_at=now,
        )
        old_event = OutboxEvent.objects.create(topic="t", payload={}, delivered_at=old)
        new_event = OutboxEvent.objects.create(topic="t", payload={}, delivered_at=now)
        waiting = OutboxEvent.objects.create(topic="t", payload={}, created_at=old)

        out = call("prune_ingestion_tasks", "--older-than", "30")

        assert "pruned tasks=3 outbox_events=1" in out
        assert not IngestionTask.objects.filter(pk__in=[t.pk for t in history])
        # The latest task of a document stays whatever its age; recent ones stay.
        assert IngestionTask.objects.filter(pk__in=[latest.pk, recent.pk]).count() == 2
        assert set(OutboxEvent.objects.values_list("pk", flat=True)) == {
            new_event.pk,
            waiting.pk,
        }
        assert old_event.pk not in OutboxEvent.objects.values_list("pk", flat=True)

    def test_active_tasks_are_never_pruned(self, knowledge_base):
        old = timezone.now() - timedelta(days=90)
        document = DocumentFactory(knowledge_base=knowledge_base, processing=True)
        for status in ["queued", "running", "retry_wait"]:
            IngestionTaskFactory(document=document, status=status, created_at=old)
        IngestionTaskFactory(document=document, status="queued")

        call("prune_ingestion_tasks", "--older-than", "1")

        assert IngestionTask.objects.count() == 4

    @pytest.mark.parametrize("args", [[], ["--older-than", "0"], ["--older-than", "x"]])
    def test_bad_arguments_are_refused(self, args):
        with pytest.raises(CommandError):
            call("prune_ingestion_tasks", *args)


def test_the_worker_command_loads_neither_parsers_nor_drf():
    # A cron-started worker pays its imports on every run: the parsing libraries
    # belong to the parser processes, DRF to the API.
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys, django; django.setup();"
        "from django.core.management import load_command_class;"
        "load_command_class('ingestion', 'run_ingestion_worker');"
        "heavy = ('pdfminer', 'docx', 'lxml', 'rest_framework.response');"
        "print(sorted(name for name in heavy if name in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"
