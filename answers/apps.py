from django.apps import AppConfig


class AnswersConfig(AppConfig):
    """The answerer: retrieve, draft claims, check every claim, cite."""

    name = "answers"
    verbose_name = "Answers"

    def ready(self) -> None:
        from retrieval import sentences

        from .evidence import sentence_texts

        # Ingestion stores the vectors of what the answerer compares; it is told
        # how the answerer cuts a chunk from here, being below this layer.
        sentences.cut_with(sentence_texts)
