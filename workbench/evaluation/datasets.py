"""SQuAD-style, TAT-QA and document data sets as passages and questions with gold
answers.

SQuAD-style JSON (`data -> paragraphs -> context, qas`; CMRC 2018 uses it): one
passage per paragraph, grouped by article. TAT-QA (a list of items with a table,
paragraphs and questions): one passage per item, the table as Markdown rows, then
the paragraphs; each item is its own group. Documents (`files`: a `root` folder
relative to the data set's file, the `documents` under it, and `questions`, each
with the `document` that answers it and its `answers`, or none when it must be
refused): every file uploaded as it is, all in one group. A knowledge-base folder
(`kb`, the layout of `../shared/corpus/kb-dev/`): its documents (listed in
`MANIFEST.sha256`, or named by the questions) and `questions.json`, a list of
`{file, language, kind, question, answer}` with `followup_of` (the index of the
question a follow-up continues) and `file: null` for a question to refuse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

FORMATS = ("squad", "tatqa", "files", "kb")
# The formats whose documents are uploaded as they are, every one published.
DOCUMENT_FORMATS = ("files", "kb")
# The formats whose passages are text a search baseline can index.
PASSAGE_FORMATS = ("squad", "tatqa")


class DatasetError(ValueError):
    """The file is not a data set this module can read."""


@dataclass(frozen=True)
class EvalPassage:
    key: str
    text: str  # what the baseline indexes
    filename: str
    content: str  # what is uploaded (Markdown keeps a table's rows apart)
    group: int = 0  # the article (SQuAD) or item (TAT-QA) it belongs to
    data: bytes = b""  # a document uploaded as it is (`files`), in place of content


@dataclass(frozen=True)
class EvalQuestion:
    text: str
    passage_key: str
    # Gold answers: alternatives (SQuAD), or the spans that make one answer together
    # (TAT-QA multi-span); a number for TAT-QA arithmetic and count questions.
    answers: tuple[str, ...] = ()
    answer_type: str = "span"  # TAT-QA: span, multi-span, arithmetic, count
    scale: str = ""  # TAT-QA: "", thousand, million, billion, percent
    kind: str = ""  # kb: fact, number, table, list, definition, procedure, followup
    language: str = ""  # kb: en, zh
    follows: int | None = None  # kb: the index of the question this one continues


@dataclass(frozen=True)
class Dataset:
    name: str
    format: str
    passages: tuple[EvalPassage, ...]
    questions: tuple[EvalQuestion, ...]

    def limited(self, limit: int | None) -> Dataset:
        """The first `limit` questions; every passage stays, as distractors."""
        if limit is None:
            return self
        return replace(self, questions=self.questions[:limit])


def load_dataset(path: Path, data_format: str = "auto") -> Dataset:
    path = Path(path)
    if path.is_dir() or data_format == "kb":
        return kb_dataset(path)
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"Cannot read {path}: {error}") from error
    if data_format == "auto":
        data_format = detect_format(raw)
    loader = {"squad": squad_dataset, "tatqa": tatqa_dataset}.get(data_format)
    if loader is None and data_format != "files":
        raise DatasetError(f"Unknown format {data_format!r}.")
    try:
        if loader is None:
            passages, questions = files_dataset(raw, Path(path).parent)
        else:
            passages, questions = loader(raw)
    except OSError as error:
        raise DatasetError(f"A document of {path} cannot be read: {error}") from error
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise DatasetError(f"{path} is not a {data_format} data set.") from error
    if not passages or not questions:
        raise DatasetError(f"{path} holds no passages with questions.")
    if len({passage.key for passage in passages}) != len(passages):
        raise DatasetError(f"{path} names two passages the same.")
    return Dataset(Path(path).name, data_format, tuple(passages), tuple(questions))


def detect_format(raw: object) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("data"), list):
        return "squad"
    if isinstance(raw, dict) and isinstance(raw.get("documents"), list):
        return "files"
    if (
        isinstance(raw, list)
        and raw
        and isinstance(raw[0], dict)
        and {"table", "paragraphs", "questions"} <= raw[0].keys()
    ):
        return "tatqa"
    raise DatasetError("Neither SQuAD-style nor TAT-QA; pass --format.")


def squad_dataset(raw: dict) -> tuple[list[EvalPassage], list[EvalQuestion]]:
    passages: list[EvalPassage] = []
    questions: list[EvalQuestion] = []
    for article_index, article in enumerate(raw["data"]):
        for index, paragraph in enumerate(article["paragraphs"]):
            text = paragraph["context"].strip()
            if not text:
                continue
            key = str(paragraph.get("id") or f"{article_index}-{index}")
            passages.append(
                EvalPassage(key, text, f"{key}.txt", text, group=article_index)
            )
            questions.extend(
                EvalQuestion(
                    qa["question"].strip(),
                    key,
                    answers=tuple(
                        dict.fromkeys(
                            answer["text"].strip()
                            for answer in qa.get("answers", [])
                            if answer["text"].strip()
                        )
                    ),
                )
                for qa in paragraph["qas"]
                if qa["question"].strip() and not qa.get("is_impossible")
            )
    return passages, questions


def tatqa_dataset(raw: list) -> tuple[list[EvalPassage], list[EvalQuestion]]:
    passages: list[EvalPassage] = []
    questions: list[EvalQuestion] = []
    for item_index, item in enumerate(raw):
        key = str(item["table"]["uid"])
        rows = [
            [" ".join(str(cell).split()) for cell in row]
            for row in item["table"]["table"]
        ]
        rows = [row for row in rows if any(row)]
        paragraphs = [
            " ".join(p["text"].split())
            for p in sorted(item["paragraphs"], key=lambda p: int(p["order"]))
        ]
        paragraphs = [p for p in paragraphs if p]
        plain = "\n".join(" | ".join(cell for cell in row if cell) for row in rows)
        text = "\n\n".join(part for part in (plain, *paragraphs) if part)
        if not text:
            continue
        passages.append(
            EvalPassage(
                key, text, f"{key}.md", _markdown(rows, paragraphs), group=item_index
            )
        )
        questions.extend(
            EvalQuestion(
                q["question"].strip(),
                key,
                answers=_tatqa_answers(q.get("answer", [])),
                answer_type=str(q.get("answer_type") or "span"),
                scale=str(q.get("scale") or ""),
            )
            for q in sorted(item["questions"], key=lambda q: int(q["order"]))
            if q["question"].strip()
        )
    return passages, questions


def files_dataset(
    raw: dict, base: Path
) -> tuple[list[EvalPassage], list[EvalQuestion]]:
    root = base / raw["root"]
    names = [str(name) for name in raw["documents"]]
    passages = [
        EvalPassage(name, "", Path(name).name, "", data=(root / name).read_bytes())
        for name in names
    ]
    questions = []
    for question in raw["questions"]:
        answers = question.get("answers") or ()
        if isinstance(answers, str):
            answers = (answers,)
        answers = tuple(str(answer) for answer in answers)
        document = str(question.get("document", "")) if answers else ""
        if answers and document not in names:
            raise ValueError(f"{question['question']!r} names no listed document.")
        questions.append(EvalQuestion(question["question"].strip(), document, answers))
    return passages, questions


def kb_dataset(folder: Path) -> Dataset:
    """A knowledge-base folder: its documents and `questions.json`."""
    try:
        raw = json.loads((folder / "questions.json").read_text(encoding="utf-8"))
        manifest = folder / "MANIFEST.sha256"
        listed = (
            [line.split(None, 1)[1].strip() for line in _lines(manifest)]
            if manifest.exists()
            else []
        )
        named = [str(q["file"]) for q in raw if q.get("file")]
        names = list(dict.fromkeys([*listed, *named]))
        passages = [
            EvalPassage(
                name, "", Path(name).name, "", data=(folder / name).read_bytes()
            )
            for name in names
        ]
        questions = [_kb_question(index, item, raw) for index, item in enumerate(raw)]
    except OSError as error:
        raise DatasetError(f"{folder} cannot be read: {error}") from error
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as error:
        raise DatasetError(f"{folder} is not a kb data set: {error}") from error
    if not passages or not questions:
        raise DatasetError(f"{folder} holds no documents with questions.")
    return Dataset(folder.name, "kb", tuple(passages), tuple(questions))


def _kb_question(index: int, item: dict, raw: list) -> EvalQuestion:
    follows = item.get("followup_of")
    if follows is not None and not 0 <= int(follows) < index:
        raise ValueError(f"question {index} follows no question before it")
    answer = str(item.get("answer") or "").strip()
    document = str(item.get("file") or "") if answer else ""
    return EvalQuestion(
        str(item["question"]).strip(),
        document,
        answers=(answer,) if answer else (),
        kind=str(item.get("kind") or ""),
        language=str(item.get("language") or ""),
        follows=None if follows is None else int(follows),
    )


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def _tatqa_answers(answer: object) -> tuple[str, ...]:
    if isinstance(answer, list):
        return tuple(str(part).strip() for part in answer if str(part).strip())
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    return (str(answer).strip(),) if str(answer).strip() else ()


def _markdown(rows: list[list[str]], paragraphs: list[str]) -> str:
    parts = []
    if rows:
        width = max(len(row) for row in rows)
        lines = [
            "| " + " | ".join(cell.replace("|", r"\|") for cell in row) + " |"
            for row in rows
        ]
        lines.insert(1, "|" + " --- |" * width)
        parts.append("\n".join(lines))
    return "\n\n".join([*parts, *paragraphs]) + "\n"
