"""System checks of the parser sandbox (`manage.py check`; the worker runs the same
test at its start-up, `parsers.check_parsers`)."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from .sandbox import SandboxError, memory_limit_problem, parser_account


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
    return messages
