"""Real concurrency: worker and API processes against one database and storage."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from documents.models import Document, DocumentStatus
from ingestion.models import IngestionTask, TaskStatus
from retrieval.models import Chunk
from tests.conftest import REPO
from tests.factories import DocumentFactory, IngestionTaskFactory, api_token_for
from tests.ingestion.processes import Process
from tests.live import free_port, http, multipart

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORKERS = 8
TASKS = 200


def test_eight_worker_processes_drain_the_queue_exactly_once(knowledge_base, manage):
    tasks = [
        IngestionTaskFactory(
            document=DocumentFactory(
                knowledge_base=knowledge_base,
                processing=True,
                content=f"# Note {n}\n\nAnswer {n} is {n * 7}.\n".encode(),
            )
        )
        for n in range(TASKS)
    ]

    workers = [
        manage("run_ingestion_worker", "--worker-id", f"p{n}") for n in range(WORKERS)
    ]
    outputs = [worker.communicate(timeout=300) for worker in workers]

    for worker, (stdout, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr
        assert "database is locked" not in stdout + stderr
    claimed_lines = [
        line
        for stdout, _ in outputs
        for line in stdout.splitlines()
        if line.startswith("claimed ")
    ]
    assert len(claimed_lines) == TASKS
    assert len({line.split()[1] for line in claimed_lines}) == TASKS
    rows = IngestionTask.objects.filter(pk__in=[t.pk for t in tasks])
    assert set(rows.values_list("status", "attempt")) == {(TaskStatus.SUCCEEDED, 1)}
    assert rows.values("worker_id").distinct().count() > 1
    assert set(Document.objects.values_list("status", flat=True)) == {
        DocumentStatus.REVIEW_PENDING
    }
    assert Chunk.objects.count() == TASKS
    summaries = [
        dict(field.split("=", 1) for field in line.split() if "=" in field)
        for stdout, _ in outputs
        for line in stdout.splitlines()
        if line.startswith(("stopped ", "nothing to do "))
    ]
    assert len(summaries) == WORKERS
    missed = sum(int(summary.get("missed", 0)) for summary in summaries)
    assert missed / TASKS < 0.5


def test_api_and_worker_in_separate_processes(editor, manage, process_env):
    port = free_port()
    api = manage("runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading")
    base = f"http://127.0.0.1:{port}/api"
    try:
        for _ in range(100):
            try:
                if http("GET", f"{base}/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        token = api_token_for(editor)
        payload, headers = multipart(
            {"knowledge_base_id": "kb-company"},
            "leave.md",
            b"# Leave\n\nEvery employee receives 25 days of annual leave.\n",
        )
        status, document = http("POST", f"{base}/documents", token, payload, headers)
        assert status == 201, document
        status, task = http(
            "POST", f"{base}/documents/{document['document_id']}/submit", token
        )
        assert status == 202

        worker = subprocess.run(
            [
                sys.executable,
                str(REPO / "manage.py"),
                "run_ingestion_worker",
                task["task_id"],
            ],
            cwd=REPO,
            env=process_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert worker.returncode == 0, worker.stderr

        status, seen = http("GET", f"{base}/ingestion-tasks/{task['task_id']}", token)
        assert seen["status"] == "succeeded"
        status, chunks = http(
            "GET", f"{base}/documents/{document['document_id']}/chunks", token
        )
        assert status == 200
        assert any("25 days" in chunk["text"] for chunk in chunks["results"])
    finally:
        api.terminate()
        api.communicate(timeout=10)


def test_loop_worker_picks_up_new_work_and_stops_on_sigterm(
    knowledge_base, process_env
):
    worker = Process(
        process_env, "run_ingestion_worker", "--loop", "--poll-interval", "0.2"
    )
    try:
        # The work comes only once the worker is up and looking.
        worker.wait_for_line("started worker=")
        task = IngestionTaskFactory(
            document=DocumentFactory(knowledge_base=knowledge_base, processing=True)
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            task.refresh_from_db()
            if task.status == TaskStatus.SUCCEEDED:
                break
            time.sleep(0.1)
        assert task.status == TaskStatus.SUCCEEDED
    finally:
        worker.signal(signal.SIGTERM)
        returncode = worker.stop(timeout=30)
    assert returncode == 0, worker.stderr
    worker.wait_for_line(f"claimed task={task.pk}")
    worker.wait_for_line("stopping worker=")
