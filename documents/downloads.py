"""The one way an original file leaves Curator: as an inert attachment.

An uploaded HTML or SVG served with its own type would run its scripts in
Curator's origin; as `application/octet-stream` under a sandboxing policy a
browser neither renders nor sniffs it. The real type stays in the document's JSON.
"""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.http import FileResponse

from .models import Document


def original_file_response(document: Document) -> FileResponse:
    response = FileResponse(
        default_storage.open(document.storage_key, "rb"),
        as_attachment=True,
        filename=document.filename,
        content_type="application/octet-stream",
    )
    response["Content-Security-Policy"] = "sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    return response
