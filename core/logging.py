"""`LOG_FORMAT=json`: one JSON object per line.

Fields: time, level, logger, message, every `extra=` field of the record, and the
`key=value` pairs of the message itself (`task=... worker=... seconds=...`, the
form every worker line already has), so plain lines need no second spelling.
Pairs are read only from Curator's own loggers: another logger's message may
quote a request path or a header, and `/api/x?task=1` must not become a field.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else came from `extra=`.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
_PAIR = re.compile(r"(?<![\w=])([a-z_]+)=([^\s=]+)")
_OWN_LOGGERS = ("config", "core", "documents", "ingestion", "retrieval")


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": message,
        }
        if record.name.split(".", 1)[0] in _OWN_LOGGERS:
            for key, value in _PAIR.findall(message):
                entry.setdefault(key, value)
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)
