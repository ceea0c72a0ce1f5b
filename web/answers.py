"""Answers to check: what askers marked not helpful, for the reviewers of the
knowledge bases the answers cite (`conversations.selectors.answers_to_check_for`)."""

from __future__ import annotations

import re

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View

from conversations.selectors import answers_to_check_for
from documents.models import Role
from documents.selectors import knowledge_base_ids_for

PER_PAGE = 25
# The answer's "[S1]" markers, shown as the numbers of the sources listed below it.
_MARKER = re.compile(r"\s*\[S(\d+)\]")


class AnswersToCheckView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        # As the API's role checks: a member without the role is told so (403).
        if not knowledge_base_ids_for(request.user, minimum_role=Role.REVIEWER):
            return render(request, "web/answers/forbidden.html", status=403)
        page = Paginator(answers_to_check_for(request.user), PER_PAGE).get_page(
            request.GET.get("page")
        )
        for feedback in page:  # the page keeps these objects for the template
            feedback.shown_answer = _MARKER.sub(r" [\1]", feedback.answer)
        return render(request, "web/answers/list.html", {"page": page})
