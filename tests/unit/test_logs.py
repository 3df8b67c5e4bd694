"""Structured logs: one event per line, with its fields and the process's static fields."""

from __future__ import annotations

import json
import logging

import pytest

from syncflow.util.logs import configure_logging, log_event


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


MEGABYTE = "x" * 1024 * 1024
MORE = f"… ({1024 * 1024 - 4096} bytes more)"


def last_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, f"want exactly one line, got {err.count(chr(10))}"
    return err.rstrip("\n")


def raise_and_log(logger: logging.Logger, message: str) -> None:
    try:
        raise ValueError(message)
    except ValueError:
        logger.exception("handler failed")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_megabyte_field_is_capped_at_4_kib(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(fmt)  # type: ignore[arg-type]
    log_event(logging.getLogger("t"), "task.done", key="sync/r/c/ns/n", error=MEGABYTE)
    line = last_line(capsys)
    assert len(line.encode()) < 4096 + 300
    error = json.loads(line)["error"] if fmt == "json" else json.loads(line.split("error=", 1)[1])
    assert error == "x" * 4096 + MORE


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_megabyte_exception_and_message_are_capped(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(fmt)  # type: ignore[arg-type]
    raise_and_log(logging.getLogger("t"), MEGABYTE)
    assert len(last_line(capsys).encode()) < 4096 + 300
    logging.getLogger("t").warning("Task raised unexpected: %s", MEGABYTE)  # a foreign (Celery) message
    line = last_line(capsys)
    assert len(line.encode()) < 4096 + 300 and "bytes more)" in line


LINE_BREAKS = "a\nb\rc\r\nd\x0be\x0cf\x1cg\x85h\u2028i\u2029j"


def test_text_lines_escape_every_line_break_in_event_fields_and_exception(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("text", agent="a\nb")
    logger = logging.getLogger("t")
    log_event(logger, "task.done", error=LINE_BREAKS, other=f"no-space{LINE_BREAKS}")
    line = last_line(capsys)
    assert json.loads(line.split("error=", 1)[1].split(" other=")[0]) == LINE_BREAKS
    assert LINE_BREAKS.splitlines() != [LINE_BREAKS] and line.splitlines() == [line]
    logger.warning(f"free text {LINE_BREAKS}")
    line = last_line(capsys)
    assert line.splitlines() == [line]
    raise_and_log(logger, LINE_BREAKS)
    line = last_line(capsys)
    assert line.splitlines() == [line]
    assert "ValueError: a\\nb" in line


def test_text_lines_keep_plain_values_bare_and_readable(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("text")
    log_event(logging.getLogger("t"), "task.done", key="sync/r/root:a/ns/n", note="café", empty="")
    line = last_line(capsys)
    assert 'task.done key=sync/r/root:a/ns/n note=café empty=""' in line
