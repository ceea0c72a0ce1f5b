"""System checks of the parser sandbox (`manage.py check`; the worker runs the same
tests at its start-up: `parsers.check_parsers` and `parser_exposure`)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core import checks

from .sandbox import SandboxError, memory_limit_problem, parser_account
from .sandbox.privileges import readable_by


@checks.register(checks.Tags.security)
def parser_sandbox_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    try:
        parser_account(settings.INGESTION_PARSER_USER)
    except SandboxError as error:
        messages.append(checks.Error(str(error), id="ingestion.E001"))
    problem = memory_limit_problem(settings.INGESTION_PARSE_MEMORY_BYTES or None)
    if problem:
        messages.append(
            checks.Warning(
                f"The parser memory limit cannot be applied: {problem}.",
                hint="Raise the hard RLIMIT_AS of the worker, or lower "
                "INGESTION_PARSE_MEMORY_BYTES.",
                id="ingestion.W001",
            )
        )
    return messages + parser_exposure()


def parser_exposure() -> list[checks.CheckMessage]:
    """Warnings when a parser would be root, or its user could read the worker's
    data: the database file, the originals, the configuration."""
    try:
        account = parser_account(settings.INGESTION_PARSER_USER)
    except SandboxError:
        return []  # ingestion.E001 says why
    if account is None:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            return [
                checks.Warning(
                    "Parsers run as root: a parser taken over by a hostile file "
                    "could read and change everything on this machine.",
                    hint="Leave INGESTION_PARSER_USER empty (curator-parser or "
                    "nobody) or name an unprivileged user.",
                    id="ingestion.W002",
                )
            ]
        return []
    return [
        checks.Warning(
            f"The parser user {account.name} can read {path}.",
            hint="Take other users' access away: chmod 700 the directory that "
            "holds it (var/ by default) or chmod 600 the file.",
            id="ingestion.W003",
        )
        for path in data_paths()
        if readable_by(path, account)
    ]


def data_paths() -> list[str]:
    """What of the worker's a parser must not read, as far as it is on this disk."""
    paths = [str(settings.BASE_DIR / ".env")]
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        paths += [str(database["NAME"]), f"{database['NAME']}-wal"]
    if settings.STORAGES["default"]["BACKEND"].endswith("FileSystemStorage"):
        paths.append(str(settings.MEDIA_ROOT))
    if settings.SEARCH_SNAPSHOT_DIR:
        paths.append(str(settings.SEARCH_SNAPSHOT_DIR))
    return paths
