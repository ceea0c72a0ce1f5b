"""What `manage.py check --deploy` warns of, said when the production server starts.

gunicorn runs no system checks, so `make serve` and the systemd unit would serve
plain-HTTP settings without a word. `gunicorn.conf.py` runs this module in a child
process when the master starts (`python -m config.deploy_checks`; the master must
not import Django, or a reload's new workers would keep the old code) and logs
each line it prints. Nothing is said with DEBUG on: that is a development setup.
"""

from __future__ import annotations

import os

import django


def deploy_warnings() -> list[str]:
    """One line per warning or error `check --deploy` would report (none with DEBUG)."""
    from django.conf import settings
    from django.core import checks

    if settings.DEBUG:
        return []
    found = checks.run_checks(include_deployment_checks=True)
    return [
        _line(message)
        for message in found
        if message.level >= checks.WARNING and not message.is_silenced()
    ]


def _line(message) -> str:
    hint = f" Hint: {message.hint}" if message.hint else ""
    return f"({message.id}) {message.msg}{hint}".replace("\n", " ")


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    for line in deploy_warnings():
        print(line)


if __name__ == "__main__":
    main()
