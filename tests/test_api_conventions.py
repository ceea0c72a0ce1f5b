from __future__ import annotations

import pytest
import yaml

pytestmark = pytest.mark.django_db


def test_health_needs_no_authentication(api_client):
    response = api_client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


def test_unknown_api_path_is_json_not_found(api_client):
    response = api_client.get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.json() == {"error_code": "not_found", "detail": "Not found."}


def test_wrong_method_has_error_code(viewer, client_for):
    response = client_for(viewer).delete("/api/knowledge-bases")
    assert response.status_code == 405
    assert response.json()["error_code"] == "method_not_allowed"


def test_malformed_json_has_error_code(reviewer, client_for, knowledge_base):
    from tests.factories import DocumentFactory

    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
    response = client_for(reviewer).post(
        f"/api/documents/{document.pk}/reject",
        data="{not json",
        content_type="application/json",
        HTTP_IF_MATCH="0",
    )
    assert response.status_code == 400
    assert response.json()["error_code"] == "malformed_request"


def test_unexpected_error_reveals_nothing(editor, client_for, monkeypatch):
    from documents import services

    def explode(**kwargs):
        raise RuntimeError("/srv/secret/path SELECT * FROM documents_document")

    monkeypatch.setattr(services, "document_upload", explode)
    client = client_for(editor)
    client.raise_request_exception = False
    from tests.samples import upload

    response = client.post(
        "/api/documents",
        {"file": upload("a.md", b"text"), "knowledge_base_id": "kb-company"},
        format="multipart",
    )
    assert response.status_code == 500
    assert response.json() == {
        "error_code": "internal_error",
        "detail": "An internal error occurred.",
    }


def test_openapi_schema_lists_every_endpoint(api_client):
    response = api_client.get("/api/schema")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    paths = schema["paths"]
    for path, methods in {
        "/api/health": {"get"},
        "/api/auth/token": {"post"},
        "/api/auth/logout": {"post"},
        "/api/auth/logout-all": {"post"},
        "/api/knowledge-bases": {"get"},
        "/api/documents": {"get", "post"},
        "/api/documents/{document_id}": {"get"},
        "/api/documents/{document_id}/file": {"get"},
        "/api/documents/{document_id}/publish": {"post"},
        "/api/documents/{document_id}/reject": {"post"},
    }.items():
        assert methods <= set(paths[path]), path
    upload = paths["/api/documents"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    assert {"201", "403", "404", "413", "415", "422"} <= set(upload["responses"])
    assert "429" in paths["/api/auth/token"]["post"]["responses"]
    assert schema["components"]["securitySchemes"]["tokenAuth"] == {
        "type": "http",
        "scheme": "bearer",
    }
    assert {"tokenAuth": []} in paths["/api/auth/logout"]["post"]["security"]
    publish = paths["/api/documents/{document_id}/publish"]["post"]
    assert any(p["name"] == "If-Match" for p in publish["parameters"])


def test_swagger_ui_is_served(api_client):
    response = api_client.get("/api/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_liveness(api_client):
    response = api_client.get("/api/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readiness_checks_database_migrations_and_storage(api_client):
    response = api_client.get("/api/health/ready")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {
            "database": "ok",
            "migrations": "ok",
            "storage": "ok",
            # No warm-up in a test client's process (config/wsgi.py starts it).
            "search": "off",
            "ocr": "ok",
            "pdf_reader": "ok",
            "embedder": "ok",
            "keyword_scorer": "ok",
        },
    }


def test_readiness_reports_ocr_without_failing_on_it(api_client, settings, monkeypatch):
    monkeypatch.setattr("ingestion.health.engine_installed", lambda: False)
    missing = api_client.get("/api/health/ready")
    settings.OCR_ENABLED = False
    disabled = api_client.get("/api/health/ready")

    assert missing.status_code == 200
    assert missing.json()["checks"]["ocr"] == "unavailable"
    assert "OCR_ENABLED=false" in missing.json()["hints"]["ocr"]
    assert disabled.status_code == 200
    assert disabled.json()["checks"]["ocr"] == "disabled"
    assert "hints" not in disabled.json()


def test_readiness_reports_pdfs_read_in_python_without_failing_on_it(
    api_client, monkeypatch, tmp_path
):
    monkeypatch.setattr(
        "ingestion.health.PDF_READER_PATH", tmp_path / "pdfium_pages.so"
    )
    response = api_client.get("/api/health/ready")

    assert response.status_code == 200
    assert response.json()["checks"]["pdf_reader"] == "python"
    assert (
        "make ingestion/formats/native/pdfium_pages.so"
        in (response.json()["hints"]["pdf_reader"])
    )


def test_readiness_reports_keywords_scored_in_numpy_without_failing_on_it(
    api_client, monkeypatch
):
    monkeypatch.setattr(
        "retrieval.search_backends.snapshots.bm25_native._LIBRARY", None
    )
    response = api_client.get("/api/health/ready")

    assert response.status_code == 200
    assert response.json()["checks"]["keyword_scorer"] == "numpy"
    assert "native/bm25_top.so" in response.json()["hints"]["keyword_scorer"]


def test_readiness_fails_when_storage_is_not_writable(api_client, settings, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the media directory should be")
    settings.MEDIA_ROOT = str(blocker / "media")

    response = api_client.get("/api/health/ready")

    assert response.status_code == 503
    assert response.json()["status"] == "not_ready"
    assert response.json()["checks"]["storage"] == "unwritable"
