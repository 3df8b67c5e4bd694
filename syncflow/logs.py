"""Structured logging: one event per line, as JSON or as ``key=value`` text.

Every log call names an *event* and passes its facts as keyword fields, e.g.
``log_event(logger, "task.done", key=str(key), outcome="success")``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Literal

LogFormat = Literal["json", "text"]

_FIELDS_ATTR = "syncflow_fields"


def log_event(logger: logging.Logger, event: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """Log one structured event with its fields."""
    if logger.isEnabledFor(level):
        logger.log(level, event, extra={_FIELDS_ATTR: fields})


class _JSONFormatter(logging.Formatter):
    def __init__(self, static: dict[str, Any]) -> None:
        super().__init__()
        self.static = static

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
            **self.static,
        }
        entry.update(getattr(record, _FIELDS_ATTR, {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, separators=(",", ":"))


def _quote(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' ="\n'):
        return json.dumps(text)
    return text


class _TextFormatter(logging.Formatter):
    def __init__(self, static: dict[str, Any]) -> None:
        super().__init__()
        self.static = static

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%H:%M:%S", time.localtime(record.created)) + f".{int(record.msecs):03d}"
        parts = [ts, record.levelname.lower(), record.getMessage()]
        fields = {**getattr(record, _FIELDS_ATTR, {}), **self.static}
        parts += [f"{k}={_quote(v)}" for k, v in fields.items()]
        line = " ".join(parts)
        if record.exc_info:
            line += " exception=" + json.dumps(self.formatException(record.exc_info))
        return line


def configure_logging(fmt: LogFormat = "text", level: int | str = logging.INFO, **static: Any) -> None:
    """Send all logs to stderr in the given format (replacing earlier handlers).

    ``static`` fields (e.g. ``agent=``) are added to every line.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JSONFormatter(static) if fmt == "json" else _TextFormatter(static))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
