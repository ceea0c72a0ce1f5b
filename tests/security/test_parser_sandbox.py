"""The parser sandbox is a boundary: a parser process holds no secret and no
descriptor of the worker's, and nothing it sends can run code in the worker.

Each test attacks real processes: a `run_ingestion_worker` process and the parsers
it started (their /proc entries read while they live), or the worker's side of the
pipe in this process talking to a real parser that misbehaves (`parser_hooks`).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from documents.models import Document
from ingestion import pipeline, services
from ingestion.blocks import (
    FileTooLarge,
    ParseError,
    ParseLimits,
    TextTooLarge,
    TooManyChunks,
    TooManyPages,
)
from ingestion.models import IngestionTask
from ingestion.sandbox import (
    ParseSandbox,
    ReplyRejected,
    SandboxError,
    SandboxOptions,
    parser_account,
)
from ingestion.sandbox.processes import ParserServer
from ingestion.worker import Worker
from tests.factories import DocumentFactory
from tests.ingestion.processes import Process, wait_until
from tests.security.parser_hooks import (
    HugeAnnouncer,
    PickleSender,
    RawSender,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc"),
]

SECRETS = {
    "SECRET_KEY": "sandbox-test-secret-key-4f1c0e",
    "AWS_ACCESS_KEY_ID": "AKIASANDBOXTEST0001",
    "AWS_SECRET_ACCESS_KEY": "sandbox-test-aws-secret-9b2e7a",
    "OPENAI_API_KEY": "sandbox-test-openai-key-77d0c3",
}
MARKDOWN = b"# Travel\n\nKeep the receipt of every trip.\n"


def children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def descendants(pid: int) -> list[int]:
    found = children(pid)
    return found + [pid for child in found for pid in descendants(child)]


def threads_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("Threads:", 1)[1].split()[0])


def parsers_of(worker_pid: int) -> list[int]:
    """A worker's parsers: the processes its own children started (its server's,
    or before the sandbox was a boundary, its fork server's)."""
    return [pid for child in children(worker_pid) for pid in children(child)]


@pytest.fixture
def idle_worker(process_env):
    """A loop worker with the secrets in its environment and two warm parsers."""
    worker = Process(
        process_env,
        "run_ingestion_worker",
        "--loop",
        "--poll-interval",
        "0.2",
        INGESTION_PARSE_PROCESSES="2",
        **SECRETS,
    )
    try:
        parsers = wait_until(
            lambda: len(found := parsers_of(worker.popen.pid)) >= 2 and found
        )
        yield worker, parsers
    finally:
        worker.signal(signal.SIGTERM)
        try:
            worker.stop(timeout=20)
        finally:
            worker.kill_if_running()


@pytest.mark.slow
def test_no_secret_of_the_worker_is_in_a_parser_environment(idle_worker, process_env):
    worker, _parsers = idle_worker
    secrets = [*SECRETS.values(), process_env["DATABASE_URL"]]

    for pid in descendants(worker.popen.pid):  # the server and the parsers
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"PATH=" in environ  # a real environment was read
        leaked = [secret for secret in secrets if secret.encode() in environ]
        assert leaked == [], f"process {pid} holds {leaked}"
        names = {entry.split(b"=", 1)[0] for entry in environ.split(b"\0") if entry}
        assert not names & {b"SECRET_KEY", b"DATABASE_URL", b"DJANGO_SETTINGS_MODULE"}


@pytest.mark.slow
def test_a_parser_holds_only_its_own_pipe(idle_worker):
    worker, parsers = idle_worker
    worker_stderr = os.readlink(f"/proc/{worker.popen.pid}/fd/2")
    # A parser found just after its fork may not have closed what it inherited yet;
    # its watchdog thread starts after it has.
    wait_until(lambda: all(threads_of(pid) >= 2 for pid in parsers))

    for pid in parsers:
        fds = {
            fd: os.readlink(f"/proc/{pid}/fd/{fd}")
            for fd in os.listdir(f"/proc/{pid}/fd")
        }
        assert sorted(fds) == ["0", "1", "2", "3"], fds
        assert fds["0"] == fds["1"] == os.devnull
        assert fds["2"] == worker_stderr  # the worker's stderr, for a crash report
        assert fds["3"].startswith("socket:")  # its pipe to the worker


def test_a_reply_that_would_run_code_fails_the_task_and_runs_nothing(
    knowledge_base, editor, monkeypatch, tmp_path
):
    marker = tmp_path / "pwned"
    monkeypatch.setattr(pipeline, "get_embedder", lambda: PickleSender(str(marker)))
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=MARKDOWN,
        filename="travel.md",
        content_type="text/markdown",
    )
    task = services.document_submit(user=editor, document_id=document.pk)

    Worker(worker_id="sandbox-test", write=lambda line: None).run(task.pk)

    task = IngestionTask.objects.get(pk=task.pk)
    assert not marker.exists(), "the worker unpickled the parser's reply"
    assert (task.status, task.error_code) == ("failed", "parse_error")
    assert task.error_detail == "the parser sent a reply that is not valid"
    assert Document.objects.get(pk=document.pk).status == "failed"


@pytest.fixture
def sandbox():
    own = ParseSandbox()
    yield own
    own.stop()


def extract(sandbox: ParseSandbox, embedder, data: bytes = MARKDOWN):
    return sandbox.extract(
        "markdown",
        data,
        limits=ParseLimits(),
        timeout=30,
        memory_bytes=None,
        embedder=embedder,
    )


def pack(message) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


GOOD_VECTOR = b"\0" * 32  # one chunk of 8 float32
CHUNK = [0, "Keep the receipt.", ["Travel"], None, 0, 17, None]
GOOD_TERMS = b"\0" * 8 + b"\1\0"  # one term: its hash (0), its count (1)
# Two terms, hashes 2 and 1 (not ascending), each counted once.
UNSORTED_TERMS = (2).to_bytes(8, "little") + (1).to_bytes(8, "little") + b"\1\0" * 2
INVALID_REPLIES = {
    "pickle": b"\x80\x04\x95" + b"\0" * 16,
    "not-msgpack": b"\xc1\xc1\xc1",
    "unknown-kind": pack(["exec", "rm -rf /"]),
    "extension-type": msgpack.packb(["ok", msgpack.ExtType(1, b"x")]),
    "not-a-list": pack({"kind": "ok"}),
    "vector-size": pack(["ok", [[CHUNK], b"\0" * 31, 17]]),
    "vector-nan": pack(["ok", [[CHUNK], b"\0\0\xc0\x7f" * 8, 17]]),
    "vectors-missing": pack(["ok", [[CHUNK], None, 17]]),
    "offsets-reversed": pack(
        ["ok", [[[0, "t", [], None, 9, 3, None]], GOOD_VECTOR, 17]]
    ),
    "past-the-text": pack(["ok", [[[0, "t", [], None, 0, 99, None]], GOOD_VECTOR, 17]]),
    "page-zero": pack(["ok", [[[0, "t", [], 0, 0, 1, None]], GOOD_VECTOR, 17]]),
    "confidence": pack(["ok", [[[0, "t", [], None, 0, 1, 2.0]], GOOD_VECTOR, 17]]),
    "heading-type": pack(["ok", [[[0, "t", [1], None, 0, 1, None]], GOOD_VECTOR, 17]]),
    "extra-field": pack(["ok", [[[*CHUNK, "x"]], GOOD_VECTOR, 17]]),
    "terms-count": pack(["ok", [[CHUNK], GOOD_VECTOR, 17, []]]),
    "terms-size": pack(["ok", [[CHUNK], GOOD_VECTOR, 17, [[b"\0" * 9, 3, False]]]]),
    "terms-count-zero": pack(
        ["ok", [[CHUNK], GOOD_VECTOR, 17, [[b"\0" * 10, 3, False]]]]
    ),
    "terms-unsorted": pack(
        ["ok", [[CHUNK], GOOD_VECTOR, 17, [[UNSORTED_TERMS, 3, False]]]]
    ),
    "terms-twice": pack(
        [
            "ok",
            [[CHUNK], GOOD_VECTOR, 17, [[GOOD_TERMS[:8] * 2 + b"\1\0" * 2, 3, False]]],
        ]
    ),
    "terms-type": pack(["ok", [[CHUNK], GOOD_VECTOR, 17, [["text", 3, False]]]]),
    "terms-folds": pack(["ok", [[CHUNK], GOOD_VECTOR, 17, [[GOOD_TERMS, 3, 1]]]]),
    "terms-unasked": pack(["ok", [[CHUNK], None, 17, [[GOOD_TERMS, 3, False]]]]),
    "endless-time": pack(["time", 1e9]),
    "progress-past-total": pack(["progress", 5, 1]),
    "failed-name": pack(["failed", "not an identifier; rm"]),
    "long-reason": pack(["error", "ingestion.blocks.ParseError", "x" * 5000]),
}


@pytest.mark.parametrize("payload", INVALID_REPLIES.values(), ids=INVALID_REPLIES)
def test_a_reply_outside_the_protocol_is_refused_and_the_parser_replaced(
    sandbox, payload
):
    sandbox.start(memory_bytes=None, processes=1)
    pid = sandbox._parsers[0].process.pid

    with pytest.raises(ReplyRejected, match=r"not valid|more time"):
        extract(sandbox, RawSender(payload))

    assert sandbox._parsers[0].process is None  # stopped at once
    assert extract(sandbox, None).chunks  # a fresh parser, which works
    assert sandbox._parsers[0].process.pid != pid


def test_a_reply_announced_larger_than_the_limit_is_refused_unread(sandbox):
    with pytest.raises(ReplyRejected):
        extract(sandbox, HugeAnnouncer())
    assert extract(sandbox, None).chunks


def test_a_valid_reply_from_the_hook_is_taken(sandbox):
    # The hook itself is sound: a well-formed answer is used as sent.
    extracted = extract(sandbox, RawSender(pack(["ok", [[CHUNK], GOOD_VECTOR, 17]])))
    assert [chunk.text for chunk in extracted.chunks] == ["Keep the receipt."]
    assert extracted.vectors.shape == (1, 8)


def test_terms_sent_beside_the_vectors_are_taken(sandbox):
    reply = pack(["ok", [[CHUNK], GOOD_VECTOR, 17, [[GOOD_TERMS, 3, False]]]])
    extracted = extract(sandbox, RawSender(reply))
    assert [(t.terms, t.length, t.folds) for t in extracted.terms] == [
        (GOOD_TERMS, 3, False)
    ]


def test_parse_errors_travel_by_name_and_unknown_names_are_generic(sandbox):
    for cls in (TooManyPages, TooManyChunks, TextTooLarge, FileTooLarge):
        named = pack(["error", f"ingestion.blocks.{cls.__name__}", "too many"])
        with pytest.raises(cls, match="too many") as raised:
            extract(sandbox, RawSender(named))
        assert type(raised.value) is cls
        sandbox.stop()  # the hook's parser exits after its one answer

    for name in (
        "builtins.SystemExit",
        "os.system",
        "ingestion.sandbox.wire.ReplyRejected",
    ):
        with pytest.raises(ParseError) as raised:
            extract(sandbox, RawSender(pack(["error", name, "odd"])))
        assert type(raised.value) is ParseError
        sandbox.stop()


def test_the_exec_fallback_also_starts_parsers_without_secrets(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRETS["SECRET_KEY"])
    server = ParserServer(start_method="exec")
    own = ParseSandbox(server)
    try:
        assert extract(own, None).chunks  # its parser is up and has answered
        pid = own._parsers[0].process.pid
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert SECRETS["SECRET_KEY"].encode() not in environ
        assert sorted(os.listdir(f"/proc/{pid}/fd")) == ["0", "1", "2", "3"]
    finally:
        own.stop()
        server.stop()


def run_command(process_env, *args: str, preexec_fn=None, **env: str):
    """`manage.py ARGS` in a process of its own, to its end."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=Path(__file__).resolve().parents[2],
        env={**process_env, **env},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec_fn,
        check=False,
    )


@pytest.mark.slow
def test_a_worker_refuses_to_start_when_the_parser_user_cannot_be_used(process_env):
    done = run_command(
        process_env, "run_ingestion_worker", INGESTION_PARSER_USER="no-such-user-x"
    )

    assert done.returncode == 1
    assert "INGESTION_PARSER_USER='no-such-user-x': no such user" in done.stderr
    assert "nothing to do" not in done.stdout


def test_switching_user_needs_a_root_worker(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxError, match="must run as root"):
        parser_account("nobody")
    assert parser_account("") is None


# The server takes the user after its imports: the interpreter need not be
# readable by it (here it lives under /root).
@pytest.mark.skipif(os.geteuid() != 0, reason="needs a root worker")
def test_parsers_run_as_the_parser_user():
    server = ParserServer()
    server.configure(SandboxOptions(user="nobody"))
    own = ParseSandbox(server)
    try:
        own.start(memory_bytes=None, processes=1)
        status = Path(f"/proc/{own._parsers[0].process.pid}/status").read_text()
        uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
        assert uids.split()[1:] == ["65534"] * 4
        assert extract(own, None).chunks
    finally:
        own.stop()
        server.stop()


def _hard_address_space_limit() -> None:
    limit = 3 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_a_memory_limit_that_cannot_be_applied_is_reported_at_start_up(process_env):
    above_the_hard_limit = {"INGESTION_PARSE_MEMORY_BYTES": str(4 * 1024**3)}

    worker = run_command(
        process_env,
        "run_ingestion_worker",
        preexec_fn=_hard_address_space_limit,
        **above_the_hard_limit,
    )
    check = run_command(
        process_env,
        "check",
        preexec_fn=_hard_address_space_limit,
        **above_the_hard_limit,
    )

    assert worker.returncode == 0, worker.stderr
    assert (
        "parser memory limit cannot be applied: the hard limit on address space is "
        "3072 MiB, below it"
    ) in worker.stderr
    assert "ingestion.W001" in check.stderr + check.stdout
