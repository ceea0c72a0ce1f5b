"""`POST /api/documents/{id}/submit` latency: the request never waits for parsing.

200 draft documents are uploaded first; each submit then goes through the whole
Django stack (token authentication, visibility and role checks, the transaction
that moves the document, creates the task and writes the outbox event) with the
test client against a file database. No worker runs meanwhile.

    python bench/submit_latency.py [--quick] [--database-url URL]
"""

from __future__ import annotations

import argparse
import time

from common import markdown_table, median, percentile, setup_django, write_section


def measure(requests: int) -> list[float]:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from documents import services
    from documents.models import KnowledgeBase, Membership
    from tests.factories import UserFactory, api_token_for

    kb = KnowledgeBase.objects.create(id="bench-submit", name="bench")
    editor = UserFactory(username="bench-editor")
    Membership.objects.create(user=editor, knowledge_base=kb, role="editor")
    documents = [
        services.document_upload(
            user=editor,
            knowledge_base_id=kb.pk,
            uploaded_file=SimpleUploadedFile(
                f"note-{n}.md", f"# Note {n}\n\nSome text {n}.\n".encode()
            ),
        )
        for n in range(requests + 10)
    ]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_for(editor)}")
    for document in documents[:10]:  # warm-up
        client.post(f"/api/documents/{document.pk}/submit")
    samples = []
    for document in documents[10:]:
        started = time.perf_counter()
        response = client.post(f"/api/documents/{document.pk}/submit")
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 202, response.content
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="50 requests")
    parser.add_argument("--database-url", default=None, help="default: SQLite file")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    requests = 50 if args.quick else 200

    rows = []
    url = setup_django(args.database_url)
    samples = measure(requests)
    engine = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    rows.append([engine, requests, median(samples), percentile(samples, 0.95)])
    table = markdown_table(["database", "requests", "p50 ms", "p95 ms"], rows)
    print(table)
    if not args.no_write:
        write_section(
            f"submit-latency-{engine.lower()}",
            f"Submit latency ({engine})",
            f"`python bench/submit_latency.py{' --quick' if args.quick else ''}`: "
            f"{requests} `POST /api/documents/{{id}}/submit` requests through the "
            "Django test client (token auth, role check, one transaction: document "
            "`draft → processing`, task row, outbox row), one at a time, no worker "
            "running. Target: p50 under 15 ms on SQLite.",
            table,
        )


if __name__ == "__main__":
    main()
