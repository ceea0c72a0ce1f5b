"""`chat_answer()`: one question (or its parts) answered from published passages.

1. splits comparison and multi-part questions into parts (at most 3 are searched);
2. searches each part (hybrid-v1) over the caller's knowledge bases only, and
   numbers the passages found as sources S1..Sn;
3. asks the chat provider (extractive by default) for claims citing those ids;
4. `checker.check_claims()` drops a claim that cites nothing, cites an id this
   answer does not hold, or states a number that no cited source contains;
5. joins the surviving claims into the answer, returns only the cited sources
   (renumbered in order of first citation) and names each part left unanswered.

With no claim left the answer is refused, with a stable reason: `no_evidence`
(search found nothing), `insufficient_evidence` (nothing good enough to cite) or
`unsupported_claim` (the checker dropped every claim).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from core.errors import ValidationFailed
from core.text import HAN
from retrieval import search
from retrieval.errors import ProviderUnavailable
from retrieval.models import Chunk

from .checker import check_claims
from .providers import get_chat_provider
from .questions import split_question
from .types import (
    Answer,
    ChatProvider,
    Claim,
    Confidence,
    RefusalReason,
    Section,
    Source,
)

logger = logging.getLogger(__name__)

PROFILE = "hybrid-v1"
MAX_ROUNDS = 3
PASSAGES_PER_PART = 5
# An answer may not win by length: at most this many claims, whatever the parts.
MAX_CLAIMS = 3
# What a provider reads of a passage, and what the checker checks it against:
# two adjacent chunks of English (300 words each) whole.
SOURCE_CHARS = 4000
EXCERPT_CHARS = 500


# When parts fail for different reasons, the refusal names the furthest one got.
_REASON_ORDER = list(RefusalReason)


@dataclass
class _Part:
    question: str
    sources: list[Source] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    reason: RefusalReason | None = None


def chat_scope(user, knowledge_base_ids: list[str] | None) -> list[str]:
    """The knowledge bases a chat may read; unknown or foreign ids are 404."""
    return search.searchable_knowledge_bases(user, knowledge_base_ids)


def chat_answer(
    *,
    user,
    question: str,
    knowledge_base_ids: list[str] | None = None,
    provider: ChatProvider | None = None,
) -> Answer:
    question = question.strip()
    if not question:
        raise ValidationFailed("question: This field may not be blank.")
    scope = chat_scope(user, knowledge_base_ids)
    provider = provider or get_chat_provider()
    questions = split_question(question)
    sources = _SourceRegistry()
    parts = []
    try:
        searched = questions[:MAX_ROUNDS]
        for part_question in searched:
            part = _Part(part_question)
            run = search.search(
                user=user,
                question=part_question,
                knowledge_base_ids=scope,
                top_k=PASSAGES_PER_PART,
                profile=PROFILE,
            )
            part.sources = sources.add_all(run.passages)
            if not part.sources:
                part.reason = RefusalReason.NO_EVIDENCE
            else:
                drafted, reason = provider.draft(
                    part_question,
                    part.sources,
                    siblings=[other for other in searched if other != part_question],
                    statistics=run.statistics,
                )
                part.claims = check_claims(drafted, part.sources)
                if not part.claims:
                    part.reason = (
                        RefusalReason.UNSUPPORTED_CLAIM
                        if drafted
                        else reason or RefusalReason.INSUFFICIENT_EVIDENCE
                    )
            parts.append(part)
    except ProviderUnavailable as error:
        logger.warning("chat provider %s unavailable: %s", provider.name, error)
        raise
    # Parts beyond the retrieval budget are reported, never silently dropped.
    parts.extend(
        _Part(extra, reason=RefusalReason.NO_EVIDENCE)
        for extra in questions[MAX_ROUNDS:]
    )
    return _assemble(question, parts, provider.name)


class _SourceRegistry:
    """One source per passage across all parts, numbered S1, S2, ..."""

    def __init__(self) -> None:
        self._by_chunks: dict[tuple[int, ...], Source] = {}

    def add_all(self, passages: Sequence[search.Passage]) -> list[Source]:
        chunks = {
            pk: Section(text, heading_path, page)
            for pk, text, heading_path, page in Chunk.objects.filter(
                pk__in=[pk for passage in passages for pk in passage.chunk_ids]
            ).values_list("pk", "text", "heading_path", "page")
        }
        return [self._add(passage, chunks) for passage in passages]

    def _add(self, passage: search.Passage, chunks: dict[int, Section]) -> Source:
        key = tuple(passage.chunk_ids)
        if key not in self._by_chunks:
            self._by_chunks[key] = Source(
                id=f"S{len(self._by_chunks) + 1}",
                document_id=passage.document_id,
                document_version=passage.document_version,
                knowledge_base_id=passage.knowledge_base_id,
                filename=passage.filename,
                heading_path=list(passage.heading_path),
                page=passage.page,
                text=_clip(passage.text, SOURCE_CHARS),
                sections=[chunks[pk] for pk in passage.chunk_ids if pk in chunks],
            )
        return self._by_chunks[key]


# --- Putting the answer together ----------------------------------------------------

_CJK = re.compile(f"[{HAN}]")

_MESSAGES = {
    "zh": {
        RefusalReason.NO_EVIDENCE: "在你可以访问的已发布文档中没有找到相关内容。",
        RefusalReason.INSUFFICIENT_EVIDENCE: "已发布文档中没有足以回答这个问题的依据。",
        RefusalReason.UNSUPPORTED_CLAIM: "无法给出有文档依据支持的回答。",
        "missing": "未找到依据：{parts}",
        Confidence.LOW: "最接近的原文是：",
        "more": "更多步骤见 {source}。",
    },
    "en": {
        RefusalReason.NO_EVIDENCE: (
            "No published document in your knowledge bases matches this question."
        ),
        RefusalReason.INSUFFICIENT_EVIDENCE: (
            "The published documents do not hold enough evidence to answer this "
            "question."
        ),
        RefusalReason.UNSUPPORTED_CLAIM: (
            "No answer could be supported by the published documents."
        ),
        "missing": "No supported answer was found for: {parts}",
        Confidence.LOW: "The closest passage says:",
        "more": "More steps in {source}.",
    },
}


def _assemble(question: str, parts: list[_Part], provider: str) -> Answer:
    messages = _MESSAGES["zh" if _CJK.search(question) else "en"]
    missing = [part.question for part in parts if not part.claims]
    if len(parts) < 2:
        missing = []
    claims = _merge_duplicates(_taking_turns(part.claims for part in parts))
    claims = claims[:MAX_CLAIMS]
    if not claims:
        reason = max(
            (part.reason or RefusalReason.NO_EVIDENCE for part in parts),
            key=_REASON_ORDER.index,
        )
        return Answer(
            question=question,
            answer=messages[reason],
            refused=True,
            refusal_reason=reason,
            claims=[],
            sources=[],
            partial=False,
            missing_information=missing,
            provider=provider,
            profile=PROFILE,
        )

    # Only cited sources are returned, renumbered in order of first citation.
    by_id = {source.id: source for part in parts for source in part.sources}
    renumbered: dict[str, str] = {}
    for claim in claims:
        for source_id in claim.source_ids:
            renumbered.setdefault(source_id, f"S{len(renumbered) + 1}")
    claims = [
        replace(
            claim,
            source_ids=[renumbered[i] for i in claim.source_ids],
            calculation=claim.calculation and claim.calculation.renumbered(renumbered),
        )
        for claim in claims
    ]
    sources = []
    for old_id, new_id in renumbered.items():
        quotes = [
            claim.quote or claim.text for claim in claims if new_id in claim.source_ids
        ]
        source = by_id[old_id]
        # A passage may span sections: cite the heading and page of the evidence.
        section = next(
            (s for s in source.sections if any(q in s.text for q in quotes)), None
        )
        sources.append(
            replace(
                source,
                id=new_id,
                excerpt=_excerpt(section.text if section else source.text, quotes),
                heading_path=section.heading_path if section else source.heading_path,
                page=section.page if section else source.page,
            )
        )

    lines = [
        claim.text + "".join(f"[{source_id}]" for source_id in claim.source_ids)
        for claim in claims
    ]
    # The answer is as sure as its best claim; a low one says it only quotes.
    confidence = claims[0].confidence
    if confidence == Confidence.LOW:
        lines.insert(0, messages[Confidence.LOW])
    lines.extend(
        messages["more"].format(source=f"[{claim.source_ids[0]}]")
        for claim in claims
        if claim.more and claim.source_ids
    )
    if missing:
        lines.append(messages["missing"].format(parts="; ".join(missing)))
    return Answer(
        question=question,
        answer="\n".join(lines),
        refused=False,
        refusal_reason=None,
        claims=claims,
        sources=sources,
        partial=bool(missing),
        missing_information=missing,
        provider=provider,
        profile=PROFILE,
        confidence=confidence,
    )


def _taking_turns(per_part: Iterable[list[Claim]]) -> list[Claim]:
    """Each part's best claim first, then each part's second, and so on: an
    answer capped at MAX_CLAIMS still answers every part it can."""
    lists = list(per_part)
    return [
        claim
        for rank in range(max(map(len, lists), default=0))
        for claims in lists
        if rank < len(claims)
        for claim in [claims[rank]]
    ]


def _merge_duplicates(claims: Iterable[Claim]) -> list[Claim]:
    """One claim per text (two parts may rest on one sentence), ids merged."""
    merged: dict[str, Claim] = {}
    for claim in claims:
        if claim.text in merged:
            known = merged[claim.text]
            known.source_ids = list(
                dict.fromkeys([*known.source_ids, *claim.source_ids])
            )
        else:
            merged[claim.text] = replace(claim, source_ids=list(claim.source_ids))
    return list(merged.values())


def _clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a whitespace if one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", limit - 40)
    return cut[:space] if space > 0 else cut


def _excerpt(text: str, quotes: Sequence[str]) -> str:
    """Up to EXCERPT_CHARS of `text`, placed so that the quoted evidence shows."""
    if len(text) <= EXCERPT_CHARS:
        return text
    positions = [text.find(quote) for quote in quotes]
    positions = [position for position in positions if position >= 0]
    start = max(0, min(positions) - EXCERPT_CHARS // 5) if positions else 0
    start = min(start, len(text) - EXCERPT_CHARS)
    window = text[start : start + EXCERPT_CHARS].strip()
    return (
        ("…" if start else "")
        + window
        + ("…" if start + EXCERPT_CHARS < len(text) else "")
    )
