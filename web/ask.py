"""The Ask page: a question box over the caller's knowledge bases, the caller's
conversations beside it. The answer itself streams from `/api/chat/stream`
(`static/web/ask.js`), so asking has one code path, the API's."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from core.errors import NotFound
from documents.selectors import knowledge_bases_for
from retrieval import conversations, selectors
from retrieval.models import HiddenReason

# The side list shows the newest ones; older ones stay in the API's pages.
CONVERSATIONS_LISTED = 50

# What stands in place of a turn its owner is not shown (`selectors.turns_of`).
HIDDEN_TURN_TEXT = {
    HiddenReason.SOURCES_UNREADABLE: gettext_lazy(
        "Hidden: you no longer have access to its sources."
    ),
    HiddenReason.SOURCES_UNRECORDED: gettext_lazy(
        "Hidden: this answer was kept before Curator recorded its sources, so "
        "whether you may still read them cannot be checked."
    ),
}


def _strings() -> dict[str, str]:
    """What the page's script writes, in the page's language."""
    return {
        "asking": _("Looking through your knowledge bases…"),
        "you_asked": _("You asked"),
        "answer": _("Answer"),
        "confidence_high": _("Confidence: high"),
        "confidence_medium": _("Confidence: medium"),
        "confidence_low": _("Confidence: low (the closest passage, quoted)"),
        "sources": _("Sources"),
        "source": _("Source"),
        "version": _("version"),
        "page": _("page"),
        "refused": _("No answer: the published documents do not answer this."),
        "closest": _("The closest passages"),
        "no_closest": _("No passage came close."),
        "open_passage": _("Open the passage"),
        "feedback_question": _("Was this answer helpful?"),
        "comment": _("Comment (optional)"),
        "helpful": _("Helpful"),
        "not_helpful": _("Not helpful"),
        "thanks": _("Thank you: your feedback was saved."),
        "pick_kb": _("Choose at least one knowledge base to search."),
        "empty_question": _("Write a question first."),
        "throttled": _("Too many questions at once. Wait a moment and ask again."),
        "search_unavailable": _(
            "Search is unavailable right now. Try again in a few minutes."
        ),
        "not_found": _(
            "That conversation or knowledge base is not available to you any more."
        ),
        "invalid": _("The question could not be sent"),
        "signed_out": _("You are signed out. Sign in again to ask."),
        "failed": _("The answer could not be produced"),
        "cut_off": _("The answer stopped before it finished. Try again."),
        "network": _("Curator could not be reached. Check your connection and retry."),
        "source_missing": _("This source is no longer available to you."),
        "error_code": _("error code"),
    }


def _conversation_list(request: HttpRequest) -> list:
    return list(selectors.conversations_for(request.user)[:CONVERSATIONS_LISTED])


def _opened(request: HttpRequest):
    """The conversation named by `?conversation=`, with its turns, or None."""
    raw = request.GET.get("conversation")
    if not raw:
        return None
    try:
        conversation = selectors.conversation_with_turns(request.user, uuid.UUID(raw))
    except (ValueError, NotFound):
        raise Http404(_("Conversation not found.")) from None
    for turn in conversation.turns.all():
        turn.hidden_text = HIDDEN_TURN_TEXT.get(turn.hidden_reason, "")
    return conversation


class AskView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return render(
            request,
            "web/ask/page.html",
            {
                "knowledge_bases": knowledge_bases_for(request.user).order_by("name"),
                "conversations": _conversation_list(request),
                "opened": _opened(request),
                "strings": _strings(),
            },
        )


class ConversationListView(LoginRequiredMixin, View):
    """The side list alone, refreshed by the page after each answer."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(
            request,
            "web/ask/conversations.html",
            {"conversations": _conversation_list(request)},
        )


class ConversationDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, conversation_id: uuid.UUID) -> HttpResponse:
        try:
            conversations.conversation_delete(
                user=request.user, conversation_id=conversation_id
            )
        except NotFound:
            raise Http404(_("Conversation not found.")) from None
        messages.success(request, _("The conversation was deleted."))
        return redirect(reverse("web:ask"))
