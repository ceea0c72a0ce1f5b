"""What the layers above learn of a publish once it commits.

Sent from `transaction.on_commit`, with `knowledge_base_id` and `document_id`:
`version_published` for the version a publish made searchable,
`version_withdrawn` for each version it archived. A deleted document row is
`post_delete` of `Document`. Receivers must not raise: the publish is committed
(`robust` sending logs what they raise).
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from .models import Document

version_published = Signal()
version_withdrawn = Signal()


def announce_on_commit(signal: Signal, documents: list[tuple[str, object]]) -> None:
    """Send `signal` for each (knowledge base id, document id) once the current
    transaction commits."""

    def send() -> None:
        for knowledge_base_id, document_id in documents:
            signal.send_robust(
                Document,
                knowledge_base_id=knowledge_base_id,
                document_id=document_id,
            )

    transaction.on_commit(send)
