"""`LOG_FORMAT=json`: the worker's log lines are JSON objects with its fields."""

from __future__ import annotations

import json
import logging

import pytest

from core.logging import JSONFormatter
from tests.factories import IngestionTaskFactory


def test_json_formatter_keeps_extra_and_message_pairs():
    record = logging.makeLogRecord(
        {
            "name": "ingestion.worker",
            "levelname": "INFO",
            "msg": "task finished task=%s worker=%s seconds=%.3f",
            "args": ("t-1", "w-1", 0.25),
            "duration_seconds": 0.25,
        }
    )

    entry = json.loads(JSONFormatter().format(record))

    assert entry["message"] == "task finished task=t-1 worker=w-1 seconds=0.250"
    assert entry["level"] == "INFO"
    assert entry["logger"] == "ingestion.worker"
    assert (entry["task"], entry["worker"], entry["seconds"]) == ("t-1", "w-1", "0.250")
    assert entry["duration_seconds"] == 0.25
    assert "time" in entry


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_worker_logs_json_lines_when_asked(knowledge_base, manage, process_env):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base)
    process_env.update(LOG_FORMAT="json", LOG_LEVEL="INFO")

    worker = manage("run_ingestion_worker", "--worker-id", "json-1")
    _, stderr = worker.communicate(timeout=60)

    assert worker.returncode == 0, stderr
    entries = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    stages = [e for e in entries if e["message"].startswith("stage finished")]
    assert [e["stage"] for e in stages] == [
        "download",
        "parse",
        "embedding",
        "indexing",
        "finalizing",
    ]
    for entry in stages:
        assert entry["task"] == str(task.pk)
        assert entry["worker"] == "json-1"
        assert entry["duration_seconds"] >= 0
    finished = [e for e in entries if e["message"].startswith("task finished")]
    assert len(finished) == 1
    assert finished[0]["task"] == str(task.pk)
    assert finished[0]["worker"] == "json-1"
    assert finished[0]["outcome"] == "succeeded"
    assert float(finished[0]["seconds"]) >= 0
