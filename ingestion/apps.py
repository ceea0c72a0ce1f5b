from django.apps import AppConfig

from core import readiness


class IngestionConfig(AppConfig):
    name = "ingestion"
    verbose_name = "Ingestion"

    def ready(self) -> None:
        from . import checks  # noqa: F401 - registers the system checks
        from .health import OCR_HINT, ocr_check

        readiness.register(
            "ocr", ocr_check, required=False, hints={"unavailable": OCR_HINT}
        )
