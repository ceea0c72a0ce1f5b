"""`answers/apps.py`: ingestion stores the vectors of exactly what the answerer
compares with a question, cut as the answerer cuts it."""

from __future__ import annotations

from answers import evidence
from retrieval import sentences

CHUNK = (
    "Annual leave is 25 days a year. Unused days carry over until March.\n"
    "| Level | Days |\n| Junior | 20 |\n| Senior | 30 |\n"
)


def test_the_sentences_ingestion_embeds_are_the_answerers_units():
    cut = sentences.sentence_texts(CHUNK, ["Handbook", "Leave"], 3)
    assert cut == evidence.sentence_texts(CHUNK, ["Handbook", "Leave"], 3)
    assert "Annual leave is 25 days a year." in cut
    assert any("Senior" in text and "30" in text for text in cut)
