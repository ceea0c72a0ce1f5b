"""`evaluate_retrieval` on tiny data sets, through the real ingestion path."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from django.core.management import CommandError, call_command

from documents.models import Document, KnowledgeBase
from ingestion.models import IngestionTask, OutboxEvent
from retrieval.models import Chunk
from workbench.evaluation.search_quality import COLUMNS

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _scratch_media(settings, tmp_path):
    """Originals of the scratch knowledge base go to this test's own directory."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


SQUAD = {
    "version": "v1.0",
    "data": [
        {
            "id": "A1",
            "title": "长城",
            "paragraphs": [
                {
                    "id": "A1-P1",
                    "context": "长城是中国古代的军事防御工程，东起山海关，西至嘉峪关，"
                    "全长两万多公里。",
                    "qas": [
                        {
                            "id": "Q1",
                            "question": "长城东起哪里？",
                            "answers": [{"text": "山海关", "answer_start": 16}],
                        },
                        {
                            "id": "Q2",
                            "question": "长城西至哪个关口？",
                            "answers": [{"text": "嘉峪关", "answer_start": 22}],
                        },
                    ],
                }
            ],
        },
        {
            "id": "A2",
            "title": "Leave",
            "paragraphs": [
                {
                    "id": "A2-P1",
                    "context": "Every employee receives twenty five days of paid "
                    "annual leave per calendar year.",
                    "qas": [
                        {
                            "id": "Q3",
                            "question": "How many days of annual leave do "
                            "employees receive?",
                            "answers": [{"text": "twenty five", "answer_start": 24}],
                        }
                    ],
                },
                {
                    "id": "A2-P2",
                    "context": "The office printer on the third floor needs a new "
                    "toner cartridge every month.",
                    "qas": [
                        {
                            "id": "Q4",
                            "question": "Which printer needs a new toner cartridge?",
                            "answers": [{"text": "third floor", "answer_start": 26}],
                        }
                    ],
                },
            ],
        },
    ],
}

TATQA = [
    {
        "table": {
            "uid": "t-sales",
            "table": [
                ["", "2019", "2018"],
                ["Fixed price sales", "$ 1,452.4", "$ 1,146.2"],
                ["Total sales", "$1,496.5", "$1,202.9"],
            ],
        },
        "paragraphs": [
            {
                "uid": "p1",
                "order": 1,
                "text": "Substantially all of our contracts are fixed-price contracts.",
            }
        ],
        "questions": [
            {"uid": "q1", "order": 1, "question": "What were total sales in 2019?"},
            {"uid": "q2", "order": 2, "question": "Are the contracts fixed-price?"},
        ],
    },
    {
        "table": {
            "uid": "t-staff",
            "table": [
                ["", "2019", "2018"],
                ["Headcount of engineers", "812", "745"],
            ],
        },
        "paragraphs": [
            {
                "uid": "p2",
                "order": 1,
                "text": "Engineering headcount grew as the company opened a "
                "research centre in Lyon.",
            }
        ],
        "questions": [
            {"uid": "q3", "order": 1, "question": "Where was the research centre?"},
        ],
    },
]


def evaluate(tmp_path, data, *args: str) -> str:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = io.StringIO()
    call_command(
        "evaluate_retrieval",
        "--dataset",
        str(path),
        *args,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def table_rows(output: str) -> list[dict[str, str]]:
    lines = output.strip().splitlines()
    header = re.split(r"\s{2,}", lines[1].strip())
    assert tuple(header) == COLUMNS
    return [
        dict(zip(header, re.split(r"\s{2,}", line.strip()), strict=True))
        for line in lines[2:]
    ]


def test_squad_table_has_a_row_per_profile_and_the_baseline(tmp_path):
    output = evaluate(tmp_path, SQUAD)

    assert output.splitlines()[0].startswith("dataset.json (squad): 3 passages")
    rows = table_rows(output)
    assert [row["profile"] for row in rows] == [
        "keyword",
        "vector",
        "hybrid-v1",
        "bm25s-jieba",
    ]
    for row in rows:
        for column in ("recall@1", "recall@5", "recall@10", "MRR@10"):
            assert 0.0 <= float(row[column]) <= 1.0
        assert float(row["recall@1"]) <= float(row["recall@5"])
        assert float(row["recall@5"]) <= float(row["recall@10"])
        assert float(row["p50 ms"]) >= 0.0
    by_profile = {row["profile"]: row for row in rows}
    assert float(by_profile["keyword"]["recall@10"]) == 1.0
    assert float(by_profile["hybrid-v1"]["recall@10"]) == 1.0


def test_scratch_knowledge_base_is_removed_afterwards(tmp_path):
    evaluate(tmp_path, SQUAD, "--profile", "keyword", "--no-baseline")

    assert not KnowledgeBase.objects.filter(id__startswith="eval-").exists()
    assert not Document.objects.exists()
    assert not Chunk.objects.exists()
    assert not IngestionTask.objects.exists()
    assert not OutboxEvent.objects.exists()


def test_tatqa_json_with_profiles_and_limit(tmp_path):
    output = evaluate(tmp_path, TATQA, "--json", "--profile", "keyword", "--limit", "2")

    report = json.loads(output)
    assert report["format"] == "tatqa"
    assert report["passages"] == 2
    assert report["questions"] == 2
    assert [row["profile"] for row in report["rows"]] == ["keyword", "bm25s-jieba"]
    for row in report["rows"]:
        assert tuple(row) == COLUMNS
    keyword = report["rows"][0]
    assert keyword["recall@10"] == 1.0
    assert 0.0 <= keyword["MRR@10"] <= 1.0


def test_keep_leaves_the_knowledge_base_searchable(tmp_path):
    evaluate(tmp_path, SQUAD, "--profile", "keyword", "--no-baseline", "--keep")

    kept = KnowledgeBase.objects.get(id__startswith="eval-")
    assert kept.documents.filter(status="published").count() == 3
    assert all(
        (tmp_path / "media" / document.storage_key).exists()
        for document in kept.documents.all()
    )


def test_a_file_of_another_shape_is_refused(tmp_path):
    with pytest.raises(CommandError, match="pass --format"):
        evaluate(tmp_path, {"rows": []})


def test_without_bm25s_the_baseline_says_to_install_the_dev_requirements(
    tmp_path, monkeypatch
):
    # bm25s is a development requirement: a service installed from
    # requirements.txt alone has no `bm25s` to import.
    monkeypatch.setitem(sys.modules, "bm25s", None)

    with pytest.raises(
        CommandError, match=re.escape("pip install -r requirements-dev.txt")
    ):
        evaluate(tmp_path, SQUAD, "--profile", "keyword")
    assert not KnowledgeBase.objects.filter(id__startswith="eval-").exists()

    output = evaluate(tmp_path, SQUAD, "--profile", "keyword", "--no-baseline")
    assert [row["profile"] for row in table_rows(output)] == ["keyword"]
