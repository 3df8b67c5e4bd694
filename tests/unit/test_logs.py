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


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_one_event_is_one_line_whatever_it_holds(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(fmt, agent="a.syncagent.kcp.io")
    logger = logging.getLogger("celery.worker")
    breaks = "first\nsecond\r\nthird\u2028fourth\x1b[31m"
    logger.warning("multi-line message:\n%s", breaks)
    log_event(logger, "task.failed", error=breaks, key="sync/r/c/ns/n")
    try:
        raise ValueError("boom\nagain")
    except ValueError:
        logger.exception("handler\nfailed")
    logger.info("where\nfrom", stack_info=True)
    lines = capsys.readouterr().err.split("\n")
    assert lines[-1] == ""
    assert len(lines[:-1]) == 4
    for line in lines[:-1]:
        assert "\r" not in line and "\u2028" not in line and "\x1b" not in line
    if fmt == "json":
        entries = [json.loads(line) for line in lines[:-1]]
        assert entries[0]["event"] == f"multi-line message:\n{breaks}"
        assert entries[1]["error"] == breaks
        assert "boom\nagain" in entries[2]["exception"]
        assert "test_logs.py" in entries[3]["stack"]
    else:
        assert " warning " + json.dumps(f"multi-line message:\n{breaks}") + " agent=" in lines[0]
        assert f"error={json.dumps(breaks)}" in lines[1]
        assert lines[2].split(" ")[2] == json.dumps("handler\nfailed")
        assert "exception=" in lines[2] and "boom\\nagain" in lines[2]
        assert "stack=" in lines[3]


def test_text_values_with_tabs_or_control_characters_are_quoted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("text")
    log_event(logging.getLogger("t"), "x", tab="a\tb", bell="a\x07b", plain="sync/r/c/ns/n")
    line = capsys.readouterr().err.strip()
    assert 'tab="a\\tb"' in line and 'bell="a\\u0007b"' in line and "plain=sync/r/c/ns/n" in line
