"""Yielding (issue 35): a task that has had its turn while others wait goes back to
the queue at its next kept page, keeps its stage and progress, shows "waiting for
its next turn", and resumes from its checkpoints."""

from __future__ import annotations

import pytest

from ingestion.checkpoints import Checkpoints
from ingestion.progress import progress_html, progress_payload
from ingestion.worker import Outcome
from retrieval.models import Chunk
from tests.factories import DocumentFactory
from tests.ingestion.test_ocr_ingestion import scanned_pdf
from web.library.rows import row_for

pytestmark = pytest.mark.django_db

PAGES = 4
TEXTS = [f"Page {n} says the rent is {n * 100} euros" for n in range(1, PAGES + 1)]


@pytest.fixture(autouse=True)
def _own_storage(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.INGESTION_PARSE_PROCESSES = 1  # pages in order, one at a time


@pytest.fixture
def kept_pages(monkeypatch):
    """Every page kept by OCR, in order, across the worker's runs."""
    pages: list[int] = []
    save = Checkpoints.save_ocr_page

    def counting(self, number, blocks):
        pages.append(number)
        return save(self, number, blocks)  # whether it was kept

    monkeypatch.setattr(Checkpoints, "save_ocr_page", counting)
    return pages


def scan(knowledge_base, submit):
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        filename="scan.pdf",
        content_type="application/pdf",
        content=scanned_pdf(*TEXTS),
    )
    return submit(document)


def note(knowledge_base, submit):
    return submit(
        DocumentFactory(knowledge_base=knowledge_base, content=b"# Note\n\nShort.\n")
    )


def chunk_rows(task) -> list[tuple]:
    return [
        (c.ordinal, c.text, c.page, c.ocr_confidence, bytes(c.embedding))
        for c in Chunk.objects.filter(document_id=task.document_id).order_by("ordinal")
    ]


def test_a_task_past_its_turn_yields_to_a_waiting_one_and_resumes(
    knowledge_base, submit, run_worker, kept_pages
):
    heavy = scan(knowledge_base, submit)
    light = note(knowledge_base, submit)

    stats, lines = run_worker(turn_seconds=0.001, max_tasks=1)
    heavy.refresh_from_db()

    assert stats.outcomes == {str(heavy.pk): Outcome.YIELDED}
    assert (heavy.status, heavy.stage, heavy.total) == ("queued", "parse", PAGES)
    assert 1 <= heavy.completed < PAGES
    assert (heavy.attempt, heavy.worker_id, heavy.claim_token) == (0, None, None)
    assert heavy.waiting_for_turn
    assert "waiting for its next turn" in progress_html(heavy)
    assert progress_payload(heavy)["status_text"] == "waiting for its next turn"
    state = row_for(heavy.document, heavy).state
    assert state == f"Processing: waiting for its next turn (parse {heavy.completed}/4)"
    assert any(line.startswith(f"yielded task={heavy.pk}") for line in lines)

    stats, _ = run_worker(turn_seconds=0.001)
    heavy.refresh_from_db()
    light.refresh_from_db()

    # The waiting task went first; the scan then had the worker to itself.
    assert list(stats.outcomes) == [str(light.pk), str(heavy.pk)]
    assert (light.status, heavy.status) == ("succeeded", "succeeded")
    assert heavy.attempt == 1
    assert not heavy.waiting_for_turn
    assert kept_pages == list(range(1, PAGES + 1))  # no page read twice

    reference = scan(knowledge_base, submit)
    run_worker(reference.pk, turn_seconds=0)
    assert chunk_rows(heavy) == chunk_rows(reference) != []


def test_a_task_alone_in_the_queue_keeps_its_worker(knowledge_base, submit, run_worker):
    heavy = scan(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=0.001)

    assert stats.outcomes == {str(heavy.pk): Outcome.SUCCEEDED}
    assert stats.yielded == 0


def test_a_task_whose_pages_cannot_be_kept_does_not_yield(
    knowledge_base, submit, run_worker, monkeypatch
):
    """A turn gives up the worker only once it has kept a new page: otherwise the
    next turn would start over, and the task might never finish."""
    monkeypatch.setattr(Checkpoints, "save_ocr_page", lambda self, n, blocks: False)
    heavy = scan(knowledge_base, submit)
    light = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=0.001)

    assert list(stats.outcomes) == [str(heavy.pk), str(light.pk)]
    assert set(stats.outcomes.values()) == {Outcome.SUCCEEDED}


@pytest.mark.parametrize(
    ("lane", "ran", "waiting", "over"),
    [
        ("heavy", 4.0, {"light"}, False),  # light work waits, not for long yet
        ("heavy", 5.0, {"light"}, True),  # ... now it has: the scan steps aside
        ("heavy", 19.0, {"heavy"}, False),  # another scan waits a whole turn
        ("heavy", 20.0, {"heavy"}, True),
        ("light", 19.0, {"light"}, False),  # light work never cuts a light turn
        ("light", 20.0, {"light", "heavy"}, True),
        ("heavy", 600.0, set(), False),  # nobody waits
    ],
)
def test_a_heavy_turn_is_short_when_light_work_waits(lane, ran, waiting, over):
    from ingestion.lanes import turn_is_over

    assert (
        turn_is_over(lane=lane, ran=ran, waiting=waiting, turn=20.0, light_wait=5.0)
        is over
    )


def test_a_task_found_heavy_gives_waiting_light_work_its_place_at_once(
    knowledge_base, submit, run_worker
):
    """A scanned PDF starts light (nothing is read at submit); the run that finds
    it needs OCR lets the light work it was claimed ahead of go first."""
    heavy = scan(knowledge_base, submit)
    light = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=3600, max_tasks=2)
    heavy.refresh_from_db()

    assert list(stats.outcomes.items()) == [
        (str(heavy.pk), Outcome.YIELDED),
        (str(light.pk), Outcome.SUCCEEDED),
    ]
    assert (heavy.lane, heavy.status, heavy.work_ocr_pages) == ("heavy", "queued", 1)


def test_a_scan_yields_to_waiting_light_work_before_its_whole_turn(
    knowledge_base, submit, run_worker, settings
):
    settings.INGESTION_LIGHT_WAIT_SECONDS = 0.001
    heavy = scan(knowledge_base, submit)
    light = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=3600, max_tasks=2)

    assert list(stats.outcomes.items()) == [
        (str(heavy.pk), Outcome.YIELDED),
        (str(light.pk), Outcome.SUCCEEDED),
    ]


def test_a_heavy_only_worker_does_not_yield_to_light_work_it_never_takes(
    knowledge_base, submit, run_worker
):
    from ingestion.models import IngestionTask

    heavy = scan(knowledge_base, submit)
    IngestionTask.objects.filter(pk=heavy.pk).update(lane="heavy")  # found so
    light = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=0.001, lanes=frozenset({"heavy"}))

    assert stats.outcomes == {str(heavy.pk): Outcome.SUCCEEDED}
    assert stats.yielded == 0
    light.refresh_from_db()
    assert light.status == "queued"


def test_embedding_in_the_worker_yields_between_kept_batches_and_resumes(
    knowledge_base, submit, run_worker, settings, monkeypatch
):
    """Vectors made in the worker (a model that cannot run in the parsers, or a
    PDF) are kept batch by batch: a turn that ends while embedding goes on from
    its next batch, and the result equals an uninterrupted run's."""
    from ingestion import pipeline
    from retrieval.embeddings import HashingEmbedder

    embedded: list[str] = []

    class WorkerOnlyEmbedder(HashingEmbedder):
        portable = False

        def __init__(self):
            super().__init__(settings.EMBEDDING_DIMENSION)

        def embed(self, texts):
            embedded.extend(texts)
            return super().embed(texts)

    monkeypatch.setattr(pipeline, "get_embedder", WorkerOnlyEmbedder)
    settings.INGESTION_EMBED_BATCH = 2
    sections = "\n\n".join(
        f"# Section {n}\n\n" + f"Clause {n} sets the deposit at {n} months. " * 40
        for n in range(1, 7)
    )

    def long_note():
        return submit(
            DocumentFactory(knowledge_base=knowledge_base, content=sections.encode())
        )

    task = long_note()
    other = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=0.001, max_tasks=1)
    task.refresh_from_db()
    assert stats.outcomes == {str(task.pk): Outcome.YIELDED}
    assert (task.stage, task.completed, task.yields) == ("embedding", 2, 1)
    assert task.waiting_for_turn

    run_worker(turn_seconds=0.001)
    task.refresh_from_db()
    other.refresh_from_db()
    assert (task.status, other.status) == ("succeeded", "succeeded")
    chunk_texts = [c.text for c in Chunk.objects.filter(document_id=task.document_id)]
    assert len(chunk_texts) > 2
    # Each chunk embedded once across both turns: no kept batch made again.
    assert sorted(t for t in embedded if t in chunk_texts) == sorted(chunk_texts)

    reference = long_note()
    run_worker(reference.pk, turn_seconds=0)
    assert chunk_rows(task) == chunk_rows(reference) != []


@pytest.mark.parametrize("processes", [1, 2])
def test_a_yield_leaves_the_parsers_warm_and_loses_no_page(
    knowledge_base, submit, run_worker, kept_pages, settings, processes
):
    """The parsers finish the page they read and stay (their OCR engine loaded):
    the next task and the next turn use the same processes."""
    from ingestion.sandbox import shared_sandbox

    settings.INGESTION_PARSE_PROCESSES = processes
    heavy = scan(knowledge_base, submit)
    light = note(knowledge_base, submit)

    stats, _ = run_worker(turn_seconds=0.001, max_tasks=1)
    assert stats.outcomes == {str(heavy.pk): Outcome.YIELDED}

    def used_parsers() -> list[int]:  # others may be left stopped by earlier tests
        return [slot.process.pid for slot in shared_sandbox()._parsers[:processes]]

    parsers = used_parsers()
    read_in_first_turn = list(kept_pages)

    run_worker(turn_seconds=0.001)

    heavy.refresh_from_db()
    light.refresh_from_db()
    assert (heavy.status, light.status) == ("succeeded", "succeeded")
    assert used_parsers() == parsers
    assert sorted(kept_pages) == list(range(1, PAGES + 1))  # none read twice
    assert set(read_in_first_turn) < set(kept_pages)
