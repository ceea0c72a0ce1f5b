"""`evaluate_answers` on tiny data sets, through the real ingestion path."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from documents.models import Document, KnowledgeBase
from retrieval.models import Chunk
from workbench.evaluation.answer_quality import COLUMNS
from workbench.evaluation.datasets import load_dataset
from workbench.evaluation.matching import answer_hit, contains, holds

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _scratch_media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def article(title: str, context: str, *qas: tuple[str, str]) -> dict:
    return {
        "title": title,
        "paragraphs": [
            {
                "id": title,
                "context": context,
                "qas": [
                    {"id": f"{title}-{i}", "question": q, "answers": [{"text": a}]}
                    for i, (q, a) in enumerate(qas)
                ],
            }
        ],
    }


SQUAD = {
    "version": "v1.0",
    "data": [
        # Published (the first, third, ... article).
        article(
            "长城",
            "长城是中国古代的军事防御工程。长城东起山海关，西至嘉峪关。",
            ("长城东起哪里？", "山海关"),
        ),
        # Held out: its question must be refused.
        article(
            "鼓浪屿",
            "鼓浪屿是厦门的一个岛屿，岛上有钢琴博物馆。",
            ("鼓浪屿上有什么博物馆？", "钢琴博物馆"),
        ),
        article(
            "Leave",
            "Every employee receives 25 days of paid annual leave per year.",
            ("How many days of annual leave do employees receive?", "25 days"),
        ),
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
            {
                "uid": "q1",
                "order": 1,
                "question": "What was the amount of total sales in 2019?",
                "answer": ["$1,496.5"],
                "answer_type": "span",
                "scale": "million",
            },
        ],
    },
    {
        "table": {
            "uid": "t-staff",
            "table": [["", "2019", "2018"], ["Headcount of engineers", "812", "745"]],
        },
        "paragraphs": [],
        "questions": [
            {
                "uid": "q2",
                "order": 1,
                "question": "What was the change in the headcount of engineers "
                "from 2018 to 2019?",
                "answer": 67,
                "answer_type": "arithmetic",
                "scale": "",
            }
        ],
    },
]


def evaluate(tmp_path, data, *args: str) -> str:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = io.StringIO()
    call_command(
        "evaluate_answers",
        "--dataset",
        str(path),
        *args,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def test_half_published_answerable_answered_unanswerable_refused(tmp_path):
    details = tmp_path / "details.jsonl"

    report = json.loads(evaluate(tmp_path, SQUAD, "--json", "--details", str(details)))

    assert report["provider"] == "extractive"
    assert (report["passages_published"], report["passages_held_out"]) == (2, 1)
    (row,) = report["rows"]
    assert tuple(row) == COLUMNS
    assert row["slice"] == "all"
    assert (row["answerable"], row["unanswerable"]) == (2, 1)
    assert row["answer-hit"] == 1.0
    assert row["wrong"] == 0.0
    assert row["refused-answerable"] == 0.0
    assert row["refused-unanswerable"] == 1.0
    assert row["max claims"] <= 3
    assert 0 < row["median chars"] <= 80
    assert 0 <= row["p50 ms"] <= row["p95 ms"]
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    by_question = {line["question"]: line for line in lines}
    assert by_question["长城东起哪里？"]["hit"] is True
    assert "山海关" in by_question["长城东起哪里？"]["answer"]
    held_out = by_question["鼓浪屿上有什么博物馆？"]
    assert (held_out["answerable"], held_out["refused"]) == (False, True)


def test_tatqa_rows_per_answer_type_and_scratch_removed(tmp_path):
    output = evaluate(tmp_path, TATQA)

    header, *lines = output.strip().splitlines()[1:]
    assert header.split()[:3] == ["slice", "answerable", "answer-hit"]
    assert [line.split()[0] for line in lines] == [
        "all",
        "span",
        "multi-span",
        "arithmetic",
        "count",
    ]
    assert not KnowledgeBase.objects.filter(id__startswith="eval-").exists()
    assert not Document.objects.exists()
    assert not Chunk.objects.exists()


def test_keep_leaves_the_published_half(tmp_path):
    evaluate(tmp_path, SQUAD, "--keep")

    kept = KnowledgeBase.objects.get(id__startswith="eval-")
    assert sorted(kept.documents.values_list("filename", flat=True)) == [
        "Leave.txt",
        "长城.txt",
    ]
    assert set(kept.documents.values_list("status", flat=True)) == {"published"}


def test_an_unknown_provider_is_a_usage_error(tmp_path):
    with pytest.raises(CommandError, match="extractive, openai-compatible"):
        evaluate(tmp_path, SQUAD, "--provider", "oracle")


def test_another_provider_is_measured_through_the_same_path(
    tmp_path, use_stub, settings
):
    stub = use_stub(chat=False)
    stub.chat_reply = lambda body: json.dumps({"claims": []})

    report = json.loads(
        evaluate(tmp_path, SQUAD, "--json", "--provider", "openai-compatible")
    )

    assert report["provider"] == "openai-compatible"
    assert settings.CHAT_PROVIDER == "extractive"
    (row,) = report["rows"]
    # A provider that never claims anything refuses everything.
    assert row["refused-answerable"] == 1.0
    assert row["refused-unanswerable"] == 1.0
    assert any(path == "/v1/chat/completions" for path, _, _ in stub.requests)


class TestMatching:
    @pytest.mark.parametrize(
        ("text", "gold", "expected"),
        [
            ("Total sales, 2019: $1,496.5", "$1,496.5", True),
            ("ＦＵＬＬ  width ＴＥＸＴ", "full width text", True),
            ("光荣和ω-force开发", "光荣和ω-Force", True),
            # A number is matched whole, never inside a longer one.
            ("Revenue: $1,250", "12", False),
            ("x 1150 y", "150", False),
            # Computed numbers count at the gold answer's precision.
            ("44.1 − 56.7 = -12.60", "-12.6", True),
            ("(44.1 − 56.7) / 56.7 = -22.22%", "-22.22", True),
            ("= 25.1005", "25.1", True),
            ("= 25.16", "25.1", False),
            ("= 12.6", "-12.6", False),
            ("", "anything", False),
        ],
    )
    def test_holds(self, text, gold, expected):
        assert holds(text, gold) is expected

    def test_alternatives_and_all_spans(self):
        assert answer_hit("A and B", ["A", "C"], all_of=False)
        assert not answer_hit("A and B", ["A", "C"], all_of=True)
        assert answer_hit("A and B", ["A", "B"], all_of=True)
        assert not answer_hit("A", [], all_of=False)


def documents(tmp_path) -> dict:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "leave.md").write_text(
        "# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n",
        encoding="utf-8",
    )
    (folder / "travel.txt").write_bytes(
        "出差住宿标准：一线城市每晚不超过 600 元。\n".encode()
    )
    return {
        "root": "docs",
        "documents": ["leave.md", "travel.txt"],
        "questions": [
            {
                "question": "How many days of annual leave do employees receive?",
                "answers": ["25 days"],
                "document": "leave.md",
            },
            {
                "question": "一线城市的住宿标准是多少？",
                "answers": ["600 元"],
                "document": "travel.txt",
            },
            {"question": "How many days of sick leave do employees get?"},
        ],
    }


def test_documents_are_uploaded_as_they_are_and_every_one_published(tmp_path):
    report = json.loads(evaluate(tmp_path, documents(tmp_path), "--json"))

    assert report["format"] == "files"
    assert (report["passages_published"], report["passages_held_out"]) == (2, 0)
    (row,) = report["rows"]
    assert (row["answerable"], row["unanswerable"]) == (2, 1)
    assert row["answer-hit"] == 1.0
    assert row["refused-unanswerable"] == 1.0


def test_a_document_that_is_not_there_is_a_usage_error(tmp_path):
    data = documents(tmp_path)
    data["documents"].append("missing.pdf")

    with pytest.raises(CommandError, match="cannot be read"):
        evaluate(tmp_path, data)


def test_a_question_about_a_document_not_listed_is_a_usage_error(tmp_path):
    data = documents(tmp_path)
    data["questions"][0]["document"] = "other.md"

    with pytest.raises(CommandError, match="is not a files data set"):
        evaluate(tmp_path, data)


def test_evaluate_retrieval_leaves_documents_to_evaluate_answers(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(documents(tmp_path)), encoding="utf-8")

    with pytest.raises(CommandError, match="measured by evaluate_answers"):
        call_command("evaluate_retrieval", "--dataset", str(path), stderr=io.StringIO())


def test_the_real_documents_data_set_reads_files_of_the_shared_corpus():
    path = Path(__file__).parents[2] / "workbench/evaluation/real_documents.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not (path.parent / raw["root"]).is_dir():
        pytest.skip("../shared/corpus is not present")

    dataset = load_dataset(path)

    assert dataset.format == "files"
    assert all(passage.data for passage in dataset.passages)
    answerable = [question for question in dataset.questions if question.answers]
    assert len(answerable) >= 20
    assert len(dataset.questions) - len(answerable) >= 5


def test_one_answer_written_as_a_string_is_one_answer(tmp_path):
    data = documents(tmp_path)
    data["questions"][0]["answers"] = "25 days"

    report = json.loads(evaluate(tmp_path, data, "--json"))

    (row,) = report["rows"]
    assert row["answer-hit"] == 1.0
    (question,) = [
        q
        for q in load_dataset(tmp_path / "dataset.json").questions
        if q.text.startswith("How many days of annual")
    ]
    assert question.answers == ("25 days",)


def kb_folder(tmp_path) -> Path:
    """A knowledge-base folder in kb-dev's layout: documents, a manifest and
    questions.json with a follow-up and a question to refuse."""
    folder = tmp_path / "kb"
    (folder / "policies").mkdir(parents=True)
    (folder / "policies" / "leave.md").write_text(
        "# Leave\n\n## Level 1\n\nLevel 1 staff receive 25 days of annual leave.\n\n"
        "## Level 2\n\nLevel 2 staff receive 30 days of annual leave.\n",
        encoding="utf-8",
    )
    (folder / "policies" / "other.md").write_text(
        "# Parking\n\nVisitors park in the north lot.\n", encoding="utf-8"
    )
    (folder / "MANIFEST.sha256").write_text(
        "0 policies/leave.md\n0 policies/other.md\n", encoding="utf-8"
    )
    questions = [
        {
            "file": "policies/leave.md",
            "language": "en",
            "kind": "number",
            "question": "How many days of annual leave do level 1 staff receive?",
            "answer": "25 days",
            "answer_sentence": "Level 1 staff receive 25 days of annual leave.",
        },
        {
            "file": "policies/leave.md",
            "language": "en",
            "kind": "followup",
            "question": "And for level 2?",
            "answer": "30 days",
            "answer_sentence": "Level 2 staff receive 30 days of annual leave.",
            "followup_of": 0,
        },
        {
            "file": None,
            "language": "en",
            "kind": "unanswerable",
            "question": "What is the travel per diem in Paris?",
            "answer": "",
            "answer_sentence": "",
        },
    ]
    (folder / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    return folder


def test_a_kb_folder_asks_follow_ups_in_their_conversation(tmp_path):
    folder = kb_folder(tmp_path)
    out = io.StringIO()
    call_command(
        "evaluate_answers",
        "--dataset",
        str(folder),
        "--json",
        stdout=out,
        stderr=io.StringIO(),
    )
    report = json.loads(out.getvalue())

    assert report["format"] == "kb"
    assert (report["passages_published"], report["passages_held_out"]) == (2, 0)
    rows = {row["slice"]: row for row in report["rows"]}
    assert (rows["all"]["answerable"], rows["all"]["unanswerable"]) == (2, 1)
    # The follow-up is only answerable as level 2 of the question before it.
    assert rows["kind followup"]["answer-hit"] == 1.0
    assert rows["all"]["answer-hit"] == 1.0
    assert rows["all"]["refused-unanswerable"] == 1.0
    assert {"lang en", "format md", "kind number"} <= rows.keys()


def test_a_kb_hit_must_cite_the_gold_file(tmp_path):
    folder = kb_folder(tmp_path)
    questions = json.loads((folder / "questions.json").read_text())
    questions[0]["file"] = "policies/other.md"  # holds no such answer
    (folder / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    out = io.StringIO()
    call_command("evaluate_answers", "--dataset", str(folder), stdout=out)

    text = out.getvalue()
    assert "Misses (wrong answers first):" in text
    # Answered with the right words from a file that is not the gold one: wrong.
    misses = text.split("Misses (wrong answers first):")[1]
    assert misses.lstrip().startswith("wrong")
    assert "level 1 staff receive" in misses


def test_a_follow_up_must_follow_a_question_before_it(tmp_path):
    folder = kb_folder(tmp_path)
    questions = json.loads((folder / "questions.json").read_text())
    questions[1]["followup_of"] = 2
    (folder / "questions.json").write_text(json.dumps(questions), encoding="utf-8")

    with pytest.raises(CommandError, match="follows no question before it"):
        call_command("evaluate_answers", "--dataset", str(folder))


def test_the_kb_rule_compares_whole_text_after_nfkc_and_case_folding():
    assert contains("The limit is ２４０ Annual Leave Hours.", "240 annual leave hours")
    assert contains("试用期不得超过二个月", "二 个月")
    assert not contains("试用期不得超过2个月", "二个月")
    assert not contains("anything", "")


def test_the_kb_dev_folder_reads_when_the_shared_corpus_is_there():
    folder = Path(__file__).parents[3] / "shared/corpus/kb-dev"
    if not folder.is_dir():
        pytest.skip("../shared/corpus/kb-dev is not present")

    dataset = load_dataset(folder)

    assert dataset.format == "kb"
    assert len(dataset.passages) == 23
    assert len(dataset.questions) == 80
    follow_ups = [q for q in dataset.questions if q.follows is not None]
    assert len(follow_ups) == 5
    assert sum(1 for q in dataset.questions if not q.answers) == 15


STEPS = {
    "version": "v1.0",
    "data": [
        article(
            "Leave requests",
            "Annual leave is requested in the HR portal.\n\n"
            "Open the HR portal.\n\nChoose the dates of your leave.\n\n"
            "Submit the request to your manager.\n\n"
            "Your manager answers within two working days.",
            ("How do I request leave?", "Open the HR portal"),
        )
    ],
}


def answers(tmp_path, *args: str) -> list[str]:
    details = tmp_path / "details.jsonl"
    evaluate(tmp_path, STEPS, "--details", str(details), *args)
    return [json.loads(line)["answer"] for line in details.read_text().splitlines()]


def test_ablate_switches_a_rule_off_for_the_run_and_reports_it(tmp_path):
    steps = answers(tmp_path)
    report = json.loads(
        evaluate(tmp_path, STEPS, "--json", "--ablate", "asks-procedure")
    )
    without = answers(tmp_path, "--ablate", "asks-procedure")

    assert report["ablated"] == ["asks-procedure"]
    # The procedure's steps from the first, then the sentences ranked best.
    assert "Open the HR portal." in steps[0]
    assert "More steps" in steps[0]
    assert "More steps" not in without[0]
    assert "Rules switched off: asks-procedure" in evaluate(
        tmp_path, STEPS, "--ablate", "asks-procedure"
    )
    assert answers(tmp_path) == steps  # switched on again after the run


def test_an_unknown_rule_to_ablate_is_a_usage_error_listing_the_rules(tmp_path):
    with pytest.raises(CommandError, match="Unknown rule nope; rules: asks-number"):
        evaluate(tmp_path, SQUAD, "--ablate", "nope")
