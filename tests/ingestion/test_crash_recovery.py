"""Issue 5 with real OS processes: SIGKILL, SIGTERM/SIGINT, a database restart, load."""

from __future__ import annotations

import json
import signal
import threading
import time
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from documents.models import Document
from ingestion.models import IngestionTask
from retrieval.models import Chunk
from tests.factories import DocumentFactory, IngestionTaskFactory, api_token_for
from tests.ingestion.hostile import slow_pdf
from tests.ingestion.processes import Process, slow_worker_env, wait_until
from tests.live import free_port, http, multipart

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TEXT = b"# Leave\n\nEvery employee receives 25 days of annual leave.\n"
LEASE = 2.0
POLL = 0.5
# Process start-up, scheduling on a busy CI machine, clock reads.
SLACK = 1.5


def queued_task(knowledge_base) -> IngestionTask:
    return IngestionTaskFactory(
        document=DocumentFactory(
            knowledge_base=knowledge_base, processing=True, content=TEXT
        )
    )


def row(task) -> IngestionTask:
    return IngestionTask.objects.get(pk=task.pk)


def parsing(task, worker_id: str):
    current = row(task)
    return (
        current.status == "running"
        and current.worker_id == worker_id
        and current.stage == "parse"
    )


@pytest.mark.parametrize("run", range(10))
def test_sigkill_mid_parse_another_worker_completes_the_task(
    run, knowledge_base, process_env
):
    task = queued_task(knowledge_base)
    lease = {"INGESTION_LEASE_SECONDS": str(LEASE)}
    victim = Process(
        process_env,
        "run_ingestion_worker",
        str(task.pk),
        "--worker-id",
        "victim",
        **lease,
        **slow_worker_env(60),
    )
    rescuer = None
    try:
        wait_until(lambda: parsing(task, "victim"))
        rescuer = Process(
            process_env,
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            str(POLL),
            "--worker-id",
            "rescuer",
            **lease,
        )
        rescuer.wait_for_line("started worker=rescuer")
        assert parsing(task, "victim")

        victim.popen.kill()
        killed_at = timezone.now()
        victim.popen.wait()

        wait_until(lambda: row(task).status == "succeeded", timeout=30)
    finally:
        victim.kill_if_running()
        if rescuer is not None:
            rescuer.signal(signal.SIGTERM)
            assert rescuer.stop() == 0, rescuer.stderr

    done = row(task)
    assert (done.worker_id, done.attempt) == ("rescuer", 2)
    assert done.started_at - killed_at <= timedelta(seconds=LEASE + POLL + SLACK)
    assert Document.objects.get(pk=task.document_id).status == "review_pending"
    chunks = list(Chunk.objects.filter(document_id=task.document_id))
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len(chunks) == 1
    assert {c.ingestion_task_id for c in chunks} == {task.pk}
    assert f"claimed task={task.pk} worker=rescuer status=running attempt=2" in (
        rescuer.lines
    )


def children_of(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def descendants_of(pid: int) -> list[int]:
    """Children, their children, and so on (the parsers' fork server included)."""
    found, todo = [], [pid]
    while todo:
        children = children_of(todo.pop())
        found += children
        todo += children
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent has not reaped it


def test_the_parser_process_does_not_outlive_a_killed_worker(
    knowledge_base, process_env
):
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc")
    task = IngestionTaskFactory(
        document=DocumentFactory(
            knowledge_base=knowledge_base,
            processing=True,
            filename="slow.pdf",
            content_type="application/pdf",
            content=slow_pdf(300_000),
        )
    )
    worker = Process(process_env, "run_ingestion_worker", str(task.pk))
    try:
        wait_until(lambda: row(task).stage == "parse")
        parsers = wait_until(lambda: descendants_of(worker.popen.pid), timeout=10)
        worker.popen.kill()
        worker.popen.wait()
        wait_until(lambda: not any(alive(pid) for pid in parsers), timeout=5)
    finally:
        worker.kill_if_running()


class TestStopping:
    def start(
        self, process_env, delay: float, grace: float, *args: str, **env: str
    ) -> Process:
        return Process(
            process_env,
            "run_ingestion_worker",
            "--worker-id",
            "stopping",
            *args,
            INGESTION_SHUTDOWN_GRACE_SECONDS=str(grace),
            **slow_worker_env(delay),
            **env,
        )

    def test_sigterm_lets_the_current_task_finish_and_claims_nothing_more(
        self, knowledge_base, process_env
    ):
        first, second = queued_task(knowledge_base), queued_task(knowledge_base)
        # One task at a time: two small ones would run as one batch, whose
        # shutdown is tested in test_small_batches.py.
        worker = self.start(process_env, 1.5, 30, "--loop", INGESTION_SMALL_BATCH="1")
        try:
            wait_until(lambda: parsing(first, "stopping"))
            worker.signal(signal.SIGTERM)
            assert worker.stop() == 0, worker.stderr
        finally:
            worker.kill_if_running()

        assert row(first).status == "succeeded"
        assert row(second).status == "queued"
        assert "stopping worker=stopping signal=SIGTERM grace=30s" in worker.lines

    def test_past_the_grace_period_the_task_is_released(
        self, knowledge_base, process_env
    ):
        task = queued_task(knowledge_base)
        worker = self.start(process_env, 60, 1, "--loop")
        try:
            wait_until(lambda: parsing(task, "stopping"))
            signalled = time.monotonic()
            worker.signal(signal.SIGTERM)
            assert worker.stop() == 0, worker.stderr
            stopped_after = time.monotonic() - signalled
        finally:
            worker.kill_if_running()

        assert 1 <= stopped_after < 5
        released = row(task)
        assert (released.status, released.attempt, released.worker_id) == (
            "queued",
            0,
            None,
        )
        assert not Chunk.objects.filter(document_id=task.document_id).exists()
        assert any(line.startswith(f"released task={task.pk}") for line in worker.lines)

    def test_a_second_signal_releases_at_once(self, knowledge_base, process_env):
        task = queued_task(knowledge_base)
        worker = self.start(process_env, 60, 600, str(task.pk))
        try:
            wait_until(lambda: parsing(task, "stopping"))
            signalled = time.monotonic()
            worker.signal(signal.SIGTERM)
            worker.wait_for_line("stopping worker=stopping")
            worker.signal(signal.SIGINT)
            assert worker.stop() == 0, worker.stderr
            stopped_after = time.monotonic() - signalled
        finally:
            worker.kill_if_running()

        assert stopped_after < 3
        assert row(task).status == "queued"
        assert "releasing now worker=stopping signal=SIGINT" in worker.lines

    def test_an_idle_loop_worker_stops_at_once(self, process_env):
        worker = Process(process_env, "run_ingestion_worker", "--loop")
        try:
            worker.wait_for_line("started worker=")
            signalled = time.monotonic()
            worker.signal(signal.SIGINT)
            assert worker.stop() == 0, worker.stderr
        finally:
            worker.kill_if_running()
        assert time.monotonic() - signalled < 2


def outages(worker: Process) -> list[str]:
    return [line for line in worker.lines if line.startswith("database unavailable")]


def test_a_loop_worker_survives_a_database_restart(knowledge_base, process_env):
    if connection.vendor != "postgresql":
        pytest.skip("restarts a PostgreSQL database")
    import psycopg

    # Becomes claimable only once the database is back.
    task = IngestionTaskFactory(
        document=DocumentFactory(
            knowledge_base=knowledge_base, processing=True, content=TEXT
        ),
        status="retry_wait",
        available_at=timezone.now() + timedelta(seconds=8),
    )
    template = connection.settings_dict["NAME"]
    clone = f"curator_outage_{uuid.uuid4().hex[:8]}"
    connection.close()
    params = {**connection.get_connection_params(), "dbname": "postgres"}
    with psycopg.connect(**params, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{clone}" TEMPLATE "{template}"')
        url = process_env["DATABASE_URL"].rsplit("/", 1)[0] + f"/{clone}"
        worker = Process(
            {**process_env, "DATABASE_URL": url},
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            "0.2",
        )
        try:
            worker.wait_for_line("started worker=")
            admin.execute(f'ALTER DATABASE "{clone}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s",
                [clone],
            )
            worker.wait_for_line("database unavailable", timeout=10)
            # Down until a retry has failed too: the worker keeps trying.
            wait_until(lambda: len(outages(worker)) >= 2, timeout=10)
            admin.execute(f'ALTER DATABASE "{clone}" ALLOW_CONNECTIONS true')
            worker.wait_for_line("database available again", timeout=20)
            worker.wait_for_line(f"succeeded task={task.pk}", timeout=30)
            worker.signal(signal.SIGTERM)
            assert worker.stop() == 0, worker.stderr
        finally:
            worker.kill_if_running()
            admin.execute(f'DROP DATABASE IF EXISTS "{clone}" WITH (FORCE)')
    assert "Traceback" not in worker.stderr


# --- load --------------------------------------------------------------------------

WORKERS = 8
CLIENTS = 4
DOCUMENTS_PER_CLIENT = 8


def note(n: int) -> tuple[bytes, dict[str, str]]:
    text = f"# Note {n}\n\nAnswer {n} is {n * 7}. " + "More words here. " * 50
    return multipart({"knowledge_base_id": "kb-company"}, f"note-{n}.md", text.encode())


def test_eight_workers_and_the_api_under_load_never_see_a_locked_database(
    editor, process_env
):
    port = free_port()
    base = f"http://127.0.0.1:{port}/api"
    token = api_token_for(editor)
    processes = [Process(process_env, "runserver", f"127.0.0.1:{port}", "--noreload")]
    processes += [Process(process_env, "relay_outbox", "--loop")]
    processes += [
        Process(
            process_env,
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            "0.2",
            "--worker-id",
            f"load-{n}",
        )
        for n in range(WORKERS)
    ]
    responses: list[tuple[int, str]] = []
    task_ids: list[str] = []

    def client(number: int) -> None:
        for n in range(DOCUMENTS_PER_CLIENT):
            body, headers = note(number * 100 + n)
            status, document = http("POST", f"{base}/documents", token, body, headers)
            responses.append((status, document))
            if status != 201:
                continue
            document_id = document["document_id"]
            status, task = http("POST", f"{base}/documents/{document_id}/submit", token)
            responses.append((status, task))
            if status == 202:
                task_ids.append(task["task_id"])
            for _ in range(3):
                responses.append(http("GET", f"{base}/documents", token))
                responses.append(
                    http(
                        "GET", f"{base}/documents/{document_id}/ingestion-tasks", token
                    )
                )

    try:
        wait_until(lambda: _answers(f"{base}/health"), timeout=30)
        for process in processes[2:]:
            process.wait_for_line("started worker=")
        clients = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join()
        expected = CLIENTS * DOCUMENTS_PER_CLIENT
        assert len(task_ids) == expected, responses[-5:]
        wait_until(
            lambda: (
                IngestionTask.objects.filter(status="succeeded").count() == expected
            ),
            timeout=120,
            step=0.2,
        )
    finally:
        for process in processes:
            process.signal(signal.SIGTERM)
        codes = [process.stop() for process in processes[1:]]
        processes[0].stop()

    assert all(status < 500 for status, _ in responses), [
        r for r in responses if r[0] >= 500
    ][:3]
    assert not [body for _, body in responses if "locked" in json.dumps(body).lower()]
    assert codes == [0] * (WORKERS + 1)
    for process in processes:
        assert "database is locked" not in process.stdout + process.stderr
        assert "Traceback" not in process.stderr, process.stderr
    tasks = IngestionTask.objects.all()
    assert {(t.status, t.attempt, t.error_code) for t in tasks} == {
        ("succeeded", 1, None)
    }
    assert Chunk.objects.values("document_id").distinct().count() == expected


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False
