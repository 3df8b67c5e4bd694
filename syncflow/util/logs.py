"""Structured logging: one event per line, as JSON or as ``key=value`` text.

A line break never reaches the output unescaped, whoever logs (syncflow, Celery, kubernetes): text
lines write a message or value that holds one as a JSON string, JSON lines escape it anyway.

Every log call names an *event* and passes its facts as keyword fields, e.g.
``log_event(logger, "task.done", key=str(key), outcome="success")``. Every field, message,
exception and stack is capped at ``FIELD_LIMIT`` bytes (``syncflow.util.truncate``; tracebacks keep their
innermost frames).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, Literal

from syncflow.util.truncate import FIELD_LIMIT, truncate, truncate_lines

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
            "event": truncate(record.getMessage()),
            **self.static,
        }
        entry.update((k, _bounded(v)) for k, v in getattr(record, _FIELDS_ATTR, {}).items())
        if record.exc_info:
            entry["exception"] = truncate_lines(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack"] = truncate_lines(self.formatStack(record.stack_info))
        return json.dumps(entry, default=str, separators=(",", ":"))


def _bounded(value: Any) -> Any:
    """A JSON field value: numbers, booleans and null as they are, anything else capped."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return truncate(value)
    text = json.dumps(value, default=str)  # ASCII, so characters are bytes
    return value if len(text) <= FIELD_LIMIT else truncate(text)


# C0 and C1 controls (NEL, U+0085, ends a line too) and the Unicode line and paragraph separators.
_UNSAFE_IN_VALUE = re.compile(r'[\s="\x00-\x1f\x7f-\x9f\u2028\u2029]')
_LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _quote(value: Any) -> str:
    """A field value: bare when it is one plain word, else a JSON string (escapes line breaks)."""
    text = truncate(str(value))
    if not text or _UNSAFE_IN_VALUE.search(text):
        return json.dumps(text)
    return text


def _one_line(text: str) -> str:
    """A message as is, or as a JSON string when it holds a line break or another control character."""
    text = truncate(text)
    return json.dumps(text) if _LINE_BREAKING.search(text) else text


class _TextFormatter(logging.Formatter):
    def __init__(self, static: dict[str, Any]) -> None:
        super().__init__()
        self.static = static

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%H:%M:%S", time.localtime(record.created)) + f".{int(record.msecs):03d}"
        parts = [ts, record.levelname.lower(), _one_line(record.getMessage())]
        fields = {**getattr(record, _FIELDS_ATTR, {}), **self.static}
        parts += [f"{k}={_quote(v)}" for k, v in fields.items()]
        line = " ".join(parts)
        if record.exc_info:
            line += " exception=" + json.dumps(truncate_lines(self.formatException(record.exc_info)))
        if record.stack_info:
            line += " stack=" + json.dumps(truncate_lines(self.formatStack(record.stack_info)))
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
    # urllib3 warns once per retried request; syncflow logs each failure itself, once, with its key
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
