"""`GET /metrics`: ingestion numbers from the database, latency from this process."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from ingestion.models import IngestionTask
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _public_metrics(settings):
    # These tests read the numbers; who may read them is tested in tests/security.
    settings.METRICS_PUBLIC = True


def samples(response) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_metrics_report_ingestion_state(client, knowledge_base, run_worker):
    now = timezone.now()
    old = IngestionTaskFactory(document__knowledge_base=knowledge_base)
    IngestionTask.objects.filter(pk=old.pk).update(
        available_at=now - timedelta(minutes=10)
    )
    IngestionTaskFactory(
        failed=True,
        document__knowledge_base=knowledge_base,
        error_code="too_many_pages",
        started_at=now - timedelta(seconds=3),
        finished_at=now,
    )
    run_worker(old.pk)

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    values = samples(response)
    assert values[("curator_ingestion_tasks", (("status", "succeeded"),))] == 1
    assert values[("curator_ingestion_tasks", (("status", "failed"),))] == 1
    assert values[("curator_ingestion_tasks", (("status", "queued"),))] == 0
    assert values[("curator_ingestion_queue_oldest_age_seconds", ())] == 0
    key = (("error_code", "too_many_pages"),)
    assert values[("curator_ingestion_failures", key)] == 1
    assert values[("curator_ingestion_failures_recent", key)] == 1
    assert values[("curator_ingestion_failures", (("error_code", "parse_error"),))] == 0
    failed_le_5 = (("le", "5.0"), ("status", "failed"))
    assert values[("curator_ingestion_task_duration_seconds_bucket", failed_le_5)] == 1
    count = ("curator_ingestion_task_duration_seconds_count", (("status", "failed"),))
    assert values[count] == 1
    assert values[("curator_ingestion_claims_total", ())] == 1
    assert values[("curator_ingestion_missed_claims_total", ())] == 0
    timed = IngestionTask.objects.get(pk=old.pk).stage_seconds
    assert set(timed) == {"download", "parse", "embedding", "indexing"}
    for stage in timed:
        stage_count = (
            "curator_ingestion_stage_duration_seconds_count",
            (("stage", stage),),
        )
        assert values[stage_count] == 1
    assert ("curator_ingestion_leases_reclaimed_total", ()) in values


def test_queue_age_and_missed_claims(client, knowledge_base, run_worker):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base)
    IngestionTask.objects.filter(pk=task.pk).update(
        available_at=timezone.now() - timedelta(seconds=90)
    )
    values = samples(client.get("/metrics"))
    assert values[("curator_ingestion_queue_oldest_age_seconds", ())] >= 90

    run_worker(task.pk, worker_id="first")
    run_worker(task.pk, worker_id="late")  # the task is done: a missed claim

    values = samples(client.get("/metrics"))
    assert values[("curator_ingestion_claims_total", ())] == 1
    assert values[("curator_ingestion_missed_claims_total", ())] == 1


def test_search_and_chat_latency_are_observed(
    client, client_for, viewer, knowledge_base
):
    DocumentFactory(knowledge_base=knowledge_base, published=True)
    api = client_for(viewer)
    before = samples(client.get("/metrics"))

    assert (
        api.post("/api/search", {"question": "leave"}, format="json").status_code == 200
    )
    assert (
        api.post(
            "/api/chat", {"question": "How much leave?"}, format="json"
        ).status_code
        == 200
    )

    after = samples(client.get("/metrics"))
    for name in ("curator_search_seconds_count", "curator_chat_seconds_count"):
        assert after[(name, ())] == before.get((name, ()), 0) + 1


def test_metrics_token(client, settings):
    settings.METRICS_TOKEN = "s3cret"

    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 401
    right = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret")
    assert right.status_code == 200
    assert b"curator_ingestion_tasks" in right.content
