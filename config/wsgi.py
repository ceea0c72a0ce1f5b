"""The WSGI application (gunicorn, runserver): with `SEARCH_WARMUP` on, every
process it starts in builds its search snapshots in the background at once."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

if settings.SEARCH_WARMUP and settings.SEARCH_BACKEND.startswith(
    "retrieval.search_backends.snapshots."
):
    from retrieval.search_backends.snapshots.warmup import warmup

    warmup.start()
