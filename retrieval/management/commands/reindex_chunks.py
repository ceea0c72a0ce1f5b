from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from core.arguments import positive_int
from documents.models import KnowledgeBase
from retrieval.embeddings import EmbedderUnavailable, get_embedder
from retrieval.errors import ProviderUnavailable
from retrieval.services import (
    ReindexProgress,
    chunks_needing_reindex,
    chunks_reindex,
    sentences_remember,
)
from retrieval.terms import TOKENIZER


class Command(BaseCommand):
    help = (
        "Make the search terms and vectors of chunks again where another tokenizer "
        "or embedder made them (after an upgrade that changes either), a batch at "
        "a time: an interrupted run resumes where it stopped. Search stays up; "
        "each knowledge base's snapshots are rebuilt as its batches commit. Then "
        "store the vectors of the chunks' sentences that the answerer's model of "
        "meaning (CHAT_MEANING_PROVIDER) lacks, so that no question waits for them."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--knowledge-base",
            metavar="ID",
            default=None,
            help="Only this knowledge base's chunks (default: all).",
        )
        parser.add_argument(
            "--batch-size",
            type=positive_int,
            default=500,
            help="Chunks per committed batch (default: 500).",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="Only count the chunks that need it; exit 1 when there are any.",
        )

    def handle(self, *args, **options):
        knowledge_base_id = options["knowledge_base"]
        if (
            knowledge_base_id is not None
            and not KnowledgeBase.objects.filter(pk=knowledge_base_id).exists()
        ):
            raise CommandError(f"No knowledge base {knowledge_base_id!r}.")
        pending = chunks_needing_reindex(knowledge_base_id=knowledge_base_id).count()
        self.stdout.write(
            f"chunks needing reindex={pending} tokenizer={TOKENIZER} "
            f"embedder={get_embedder().name}"
        )
        if options["check"]:
            if pending:
                raise CommandError(f"{pending} chunks need reindex_chunks.")
            return
        try:
            done = chunks_reindex(
                knowledge_base_id=knowledge_base_id,
                batch_size=options["batch_size"],
                on_progress=self._progress,
            )
        except ProviderUnavailable as error:
            raise CommandError(
                f"The embedding provider is unavailable ({error}); the batches "
                "already done are kept: run the command again to go on."
            ) from error
        except EmbedderUnavailable as error:
            raise CommandError(
                f"Nothing reindexed: {error}. Fix the installation (pip install "
                "-r requirements.txt) and run the command again."
            ) from error
        self.stdout.write(self.style.SUCCESS(f"reindexed chunks={done}"))
        try:
            embedded = sentences_remember(
                knowledge_base_id=knowledge_base_id,
                batch_size=options["batch_size"],
                on_progress=self._sentences_progress,
            )
        except ProviderUnavailable as error:
            raise CommandError(
                f"The model of meaning is unavailable ({error}); the sentences "
                "already stored are kept: run the command again to go on."
            ) from error
        self.stdout.write(self.style.SUCCESS(f"sentences embedded={embedded}"))

    def _sentences_progress(self, progress: ReindexProgress) -> None:
        self.stdout.write(f"sentences of chunks {progress.done}/{progress.total}")

    def _progress(self, progress: ReindexProgress) -> None:
        self.stdout.write(f"reindexed {progress.done}/{progress.total}")
