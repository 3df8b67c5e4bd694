"""Structured logs: one event per line, with its fields and the process's static fields."""

from __future__ import annotations

import json
import logging

import pytest

from syncflow.logs import configure_logging, log_event


def test_json_lines_carry_event_fields_and_agent(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("json", agent="a.syncagent.kcp.io")
    log_event(logging.getLogger("t"), "task.done", key="sync/r/c/ns/n", outcome="ok")
    entry = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert entry["event"] == "task.done" and entry["key"] == "sync/r/c/ns/n"
    assert entry["agent"] == "a.syncagent.kcp.io" and entry["level"] == "info"


def test_text_lines_quote_values_with_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("text", agent="a.syncagent.kcp.io")
    log_event(logging.getLogger("t"), "watch.failed", error="connection refused")
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert 'watch.failed error="connection refused" agent=a.syncagent.kcp.io' in line
