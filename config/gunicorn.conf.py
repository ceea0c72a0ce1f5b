"""gunicorn settings for `make serve` and the systemd unit (docs/operations.md).

Everything comes from the environment, like Django's settings:
    WEB_BIND (127.0.0.1:8000), WEB_WORKERS (2), WEB_THREADS (4),
    WEB_TIMEOUT (60 s), WEB_GRACEFUL_TIMEOUT (30 s).
`kill -HUP` on the master starts new workers and lets the old ones finish the
requests they hold before they exit.
"""

import os

bind = os.environ.get("WEB_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_WORKERS", "2"))
threads = int(os.environ.get("WEB_THREADS", "4"))
# A request that outlives this is killed with its worker; chat streams end well
# before (OPENAI_TIMEOUT_SECONDS).
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT", "30"))
wsgi_app = "config.wsgi:application"
accesslog = "-"
# Behind a proxy only the proxy's address is trusted for X-Forwarded-Proto
# (SECURE_PROXY_SSL_HEADER decides what Django believes).
forwarded_allow_ips = os.environ.get("WEB_FORWARDED_ALLOW_IPS", "127.0.0.1")
