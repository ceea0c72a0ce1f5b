"""`GET /metrics` in Prometheus text format, behind `METRICS_TOKEN`.

Without a token the metrics are open only in development (`DEBUG`) or when an
operator says so (`METRICS_PUBLIC`): they name knowledge bases and error codes.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from accounts.metrics import LoginCollector
from ingestion.metrics import IngestionCollector

# Database-backed metrics stay out of the default registry: only this view pays
# for their queries.
DATABASE_REGISTRY = CollectorRegistry(auto_describe=False)
DATABASE_REGISTRY.register(IngestionCollector())
DATABASE_REGISTRY.register(LoginCollector())


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token and not (settings.DEBUG or settings.METRICS_PUBLIC):
        return HttpResponse(
            "Metrics are off: set METRICS_TOKEN (or METRICS_PUBLIC=true).\n",
            status=403,
        )
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("Unauthorized.\n", status=401)
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    body = generate_latest(REGISTRY) + generate_latest(DATABASE_REGISTRY)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
