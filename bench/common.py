"""Shared set-up for benchmarks: a scratch database, Django, and report writing.

Benchmarks are scripts, not tests: they print a table and rewrite their own section
of docs/benchmarks.md (between `<!-- bench:NAME -->` markers) with the machine, the
method and the date. Machines here are shared and noisy: report medians of repeated
runs, and ratios measured side by side in the same run.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
REPORT = REPO / "docs" / "benchmarks.md"
POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/curator_bench"


def setup_django(database_url: str | None = None, *, fresh: bool = True) -> str:
    """Point Django at a scratch database (SQLite under var/bench by default)."""
    sys.path.insert(0, str(REPO))
    bench_dir = REPO / "var" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    if database_url is None:
        path = bench_dir / "bench.sqlite3"
        if fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        database_url = f"sqlite:///{path}"
    elif fresh and database_url.startswith("postgres"):
        recreate_postgres_database(database_url)
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "benchmark-only-key")
    os.environ.setdefault("MEDIA_ROOT", str(bench_dir / "media"))
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
    # The figures of docs/benchmarks.md were measured with the hashing embedder;
    # a benchmark of another one says so (--embedder).
    os.environ.setdefault("EMBEDDING_PROVIDER", "hashing")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return database_url


def recreate_postgres_database(database_url: str) -> None:
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    admin_url = database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        )
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def markdown_table(headers: list[str], rows: list[list]) -> str:
    def cell(value) -> str:
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return str(value)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    cpus = os.cpu_count()
    memory = ""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError):
        pass
    return (
        f"{platform.machine()}, {cpus} cores{memory}, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )


def write_section(name: str, title: str, method: str, body: str) -> None:
    """Replace this benchmark's section of docs/benchmarks.md (or append it)."""
    section = (
        f"<!-- bench:{name} -->\n## {title}\n\n"
        f"*Measured {date.today().isoformat()} on {machine()}.*\n\n"
        f"{method.strip()}\n\n{body.strip()}\n<!-- /bench:{name} -->"
    )
    text = REPORT.read_text() if REPORT.exists() else "# Benchmarks\n"
    start = text.find(f"<!-- bench:{name} -->")
    end_marker = f"<!-- /bench:{name} -->"
    end = text.find(end_marker)
    if start >= 0 and end >= 0:
        text = text[:start] + section + text[end + len(end_marker) :]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    REPORT.write_text(text)
