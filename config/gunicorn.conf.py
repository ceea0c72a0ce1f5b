"""gunicorn settings for `make serve` and the systemd unit (docs/operations.md).

Everything comes from the environment, like Django's settings:
    WEB_BIND (127.0.0.1:8000), WEB_WORKERS (2), WEB_THREADS (4),
    WEB_TIMEOUT (60 s), WEB_GRACEFUL_TIMEOUT (30 s).
`kill -HUP` on the master starts new workers and lets the old ones finish the
requests they hold before they exit. At start the master logs what
`manage.py check --deploy` would warn of (`on_starting`, config/deploy_checks.py).
"""

import os
import subprocess
import sys
from pathlib import Path

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

REPO = Path(__file__).resolve().parent.parent
# Importing Django and running every check takes a few seconds; a hung child
# must not keep the server from starting.
DEPLOY_CHECKS_TIMEOUT = 60


def on_starting(server) -> None:
    """Warn, before serving, of every setting `manage.py check --deploy` warns of
    (none with DEBUG on); docs/operations.md says what a TLS proxy needs."""
    try:
        result = subprocess.run(
            [sys.executable, "-m", "config.deploy_checks"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=DEPLOY_CHECKS_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        server.log.warning("deploy checks did not run: %s", error)
        return
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        server.log.warning("deploy checks did not run: %s", last)
        return
    warnings = result.stdout.splitlines()
    if warnings:
        server.log.warning(
            "DEBUG is off and `manage.py check --deploy` warns of %d setting(s); "
            "behind a TLS proxy set the ones in docs/operations.md "
            "(Behind a TLS proxy):",
            len(warnings),
        )
    for line in warnings:
        server.log.warning("deploy check: %s", line)
