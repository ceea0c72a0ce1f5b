from django.apps import AppConfig

from core import readiness


class IngestionConfig(AppConfig):
    name = "ingestion"
    verbose_name = "Ingestion"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from documents.models import Document

        from . import checks  # noqa: F401 - registers the system checks
        from .artifacts import document_deleted
        from .health import OCR_HINT, PDF_READER_HINT, ocr_check, pdf_reader_check

        post_delete.connect(
            document_deleted, sender=Document, dispatch_uid="ingestion-artifacts"
        )

        readiness.register(
            "ocr", ocr_check, required=False, hints={"unavailable": OCR_HINT}
        )
        readiness.register(
            "pdf_reader",
            pdf_reader_check,
            required=False,
            hints={"python": PDF_READER_HINT},
        )
