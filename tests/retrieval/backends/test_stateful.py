"""Random sequences of publishes, new versions, archives, compactions, restarts
and approximate-index builds, after each of which the snapshot backend answers
as the scratch build does (Hypothesis' stateful testing).

The snapshot backend runs as the processes of a host run it: with shared files,
appends past a low SEARCH_APPEND_SHARE (so appended versions are stored and
built whole in the background), an approximate index from a few chunks on, and
a second process of the host that may answer instead of the first. Each example
has knowledge bases and a folder of its own. `BACKENDS_PROFILE=soak` runs it
longer.
"""

from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from retrieval.search_backends.scratch import ScratchBackend
from tests.retrieval.backends.agreement import assert_agree
from tests.retrieval.backends.conftest import BACKENDS, settle
from tests.retrieval.backends.library import Library

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

VOCABULARY = [
    "leave",
    "annual",
    "days",
    "hotel",
    "refund",
    "receipt",
    "train",
    "salary",
    "年假",
    "天数",
    "酒店",
    "报销",
    "发票",
    "火车",
    "工资",
    "員工",  # traditional script: folded at search
]
EVERY_WORD = " ".join(VOCABULARY)

hypothesis_settings.register_profile(
    "backends",
    max_examples=12,
    stateful_step_count=15,
    deadline=None,
    database=None,  # nothing written into the working tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
hypothesis_settings.register_profile(
    "soak", hypothesis_settings.get_profile("backends"), max_examples=300
)

texts = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8).map(" ".join)
documents = st.lists(texts, min_size=1, max_size=3)
questions = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(" ".join)
# Chunks stored by another tokenizer or embedder: read again, or by keyword only.
# Rare: a knowledge base holding one is built whole at every version.
MADE_ELSEWHERE = st.sampled_from([None] * 18 + ["tokenizer", "embedder"])


class BackendMachine(RuleBasedStateMachine):
    published = Bundle("published")

    def __init__(self, settings, backend_under_test) -> None:
        super().__init__()
        self.settings = settings
        self.settings.SEARCH_APPEND_SHARE = 0.25  # as the example before left it
        self.started = backend_under_test.started
        name = uuid.uuid4().hex[:8]
        self.kb_ids = [f"kb-a-{name}", f"kb-b-{name}"]
        self.library = Library(*self.kb_ids)
        self.processes = [self.started()]
        self.oracle = ScratchBackend()
        self.questions = [EVERY_WORD]
        self.vectors = list(get_embedder().embed_queries(self.questions))

    @property
    def serving(self):
        return self.processes[0]

    @initialize(asked=st.lists(questions, min_size=2, max_size=2))
    def ask(self, asked):
        self.questions = [EVERY_WORD, *asked]
        self.vectors = list(get_embedder().embed_queries(self.questions))

    @rule(
        target=published,
        kb=st.sampled_from([0, 1]),
        chunks=documents,
        made=MADE_ELSEWHERE,
    )
    def publish(self, kb, chunks, made):
        document = self.library.ingested(self.kb_ids[kb], chunks)
        if made == "tokenizer":
            Chunk.objects.filter(document=document).update(tokenizer="")
        elif made == "embedder":
            Chunk.objects.filter(document=document).update(embedding_model="other")
        return self.library.publish(document)

    @rule(target=published, old=consumes(published), chunks=documents)
    def publish_new_version(self, old, chunks):
        return self.library.published(
            old.knowledge_base_id, chunks, family_id=old.family_id
        )

    @rule(old=consumes(published))
    def archive(self, old):
        self.library.archive(old)

    @rule(kb=st.sampled_from([0, 1]), chunks=documents)
    def ingest_without_publishing(self, kb, chunks):
        self.library.ingested(self.kb_ids[kb], chunks)

    @rule()
    def compact(self):
        """Let the compactions that publishes past SEARCH_APPEND_SHARE started
        (and the writes and index builds under way) finish and hand over."""
        for process in self.processes:
            settle(process)

    @rule(share=st.sampled_from([0.1, 0.3, 1.0]))
    def append_share(self, share):
        """How far publishes append before a version is built whole again."""
        self.settings.SEARCH_APPEND_SHARE = share

    @rule()
    def build_approximate_index(self):
        self.serving.searcher(self.kb_ids)
        settle(self.serving)

    @rule()
    def restart(self):
        settle(self.serving)
        self.processes[0] = self.started()

    @rule()
    def switch_process(self):
        """Another process of the host answers the next questions."""
        if len(self.processes) == 1:
            self.processes.append(self.started())
        self.processes.reverse()

    @invariant()
    def answers_as_the_scratch_build(self):
        for kb_ids in ([self.kb_ids[0]], self.kb_ids):
            assert_agree(
                self.serving.searcher(kb_ids),
                self.oracle.searcher(kb_ids),
                self.questions,
                self.vectors,
            )

    def teardown(self):
        for process in self.processes:
            settle(process)


@pytest.mark.parametrize(
    ("name", "examples"), [("snapshots-shared", 1.0), ("snapshots", 0.5)]
)
def test_the_snapshot_backend_answers_as_the_scratch_build(
    name, examples, settings, tmp_path
):
    """With shared files (compactions, stored versions) the machine runs the
    profile's examples; in memory, where less happens, half as many."""
    backend_under_test = BACKENDS[name]
    if backend_under_test.shared_files:
        settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    settings.SEARCH_ANN_MIN_CHUNKS = 4
    profile = hypothesis_settings.get_profile(
        os.environ.get("BACKENDS_PROFILE", "backends")
    )

    run_state_machine_as_test(
        lambda: BackendMachine(settings, backend_under_test),
        settings=hypothesis_settings(
            profile, max_examples=max(1, int(profile.max_examples * examples))
        ),
    )
