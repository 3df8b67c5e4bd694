"""The watch's publisher: a quiet key goes at once, a burst shares messages, nothing is lost."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import pytest

from syncflow.queue import linger
from syncflow.queue.keys import ObjectKey
from syncflow.queue.linger import BacklogLinger, LingeringPublisher, QueueLingers
from tests.support.waiting import wait_for

KEYS = [ObjectKey("sync", "r", "root:ws", "ns", f"obj-{i}") for i in range(50)]


class Calls:
    """A publisher recording each call (and the thread it came on); it fails while ``failing``."""

    def __init__(self) -> None:
        self.calls: list[list[ObjectKey]] = []
        self.together: list[bool] = []
        self.threads: list[str] = []
        self.failing = False
        self.lock = threading.Lock()

    def __call__(self, messages: Sequence[tuple[ObjectKey, str]], /, *, together: bool = False) -> None:
        if self.failing:
            raise ConnectionError("broker down")
        with self.lock:
            self.calls.append([key for key, _ in messages])
            self.together.append(together)
            self.threads.append(threading.current_thread().name)

    def keys(self) -> list[ObjectKey]:
        with self.lock:
            return [key for call in self.calls for key in call]


def test_a_key_after_a_quiet_spell_is_sent_at_once_on_the_callers_thread() -> None:
    calls = Calls()
    publisher = LingeringPublisher(calls, linger=60)
    publisher([(KEYS[0], "sync")])
    assert calls.calls == [[KEYS[0]]] and calls.threads == [threading.current_thread().name]
    publisher.close()


def test_keys_sent_together_go_at_once_as_one_send_even_while_others_linger() -> None:
    calls = Calls()
    publisher = QueueLingers(calls, {"sync-bulk": 60})
    publisher([(KEYS[0], "sync-bulk")])
    publisher([(KEYS[1], "sync-bulk")])  # held: the queue lingers for a minute
    publisher([(key, "sync-bulk") for key in KEYS[2:]], together=True)
    assert calls.calls == [[KEYS[0]], KEYS[2:]] and calls.together == [False, True]
    assert calls.threads[-1] == threading.current_thread().name
    publisher.close()
    assert calls.keys() == [KEYS[0], *KEYS[2:], KEYS[1]], "no key lost"


def test_a_burst_shares_a_few_sends_and_loses_no_key() -> None:
    calls = Calls()
    publisher = LingeringPublisher(calls, linger=0.2)
    for key in KEYS:
        publisher([(key, "sync")])
    wait_for(lambda: len(calls.keys()) == len(KEYS), timeout=5, what="every key sent")
    assert calls.keys() == KEYS, "each key once, in order"
    assert len(calls.calls) == 2, "the first at once, the rest of the burst together"
    publisher.close()


def test_a_full_buffer_is_sent_by_the_caller() -> None:
    calls = Calls()
    publisher = LingeringPublisher(calls, linger=60, limit=10)
    for key in KEYS[:11]:
        publisher([(key, "sync")])
    assert calls.calls == [[KEYS[0]], KEYS[1:11]], "held keys wait no longer than the buffer has room"
    publisher.close()


def test_close_sends_what_is_held() -> None:
    calls = Calls()
    publisher = LingeringPublisher(calls, linger=60)
    publisher([(KEYS[0], "sync")])
    publisher([(KEYS[1], "sync")])
    assert calls.keys() == [KEYS[0]]
    started = time.monotonic()
    publisher.close()
    assert calls.keys() == KEYS[:2] and time.monotonic() - started < 10
    publisher([(KEYS[2], "sync")])  # after close: at once
    assert calls.keys() == KEYS[:3]


def test_a_failed_background_send_is_logged_and_the_next_ones_still_go(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Calls()
    publisher = LingeringPublisher(calls, linger=0.05)
    publisher([(KEYS[0], "sync")])
    calls.failing = True
    with caplog.at_level(logging.WARNING, logger="syncflow.publish"):
        publisher([(KEYS[1], "sync")])  # held, then its send fails on the background thread

        def failure_logged() -> bool:
            return any(r.getMessage() == "publish.failed" for r in caplog.records)

        wait_for(failure_logged, timeout=5, what="the failed send's log line")
    [record] = [r for r in caplog.records if r.getMessage() == "publish.failed"]
    fields = record.syncflow_fields  # type: ignore[attr-defined]
    assert fields["key"] == str(KEYS[1]) and fields["keys"] == 1 and "broker down" in fields["error"]
    calls.failing = False
    publisher([(KEYS[2], "sync")])
    publisher.close()
    assert calls.keys() == [KEYS[0], KEYS[2]]


def test_each_queue_lingers_as_long_as_it_is_told_and_close_sends_all() -> None:
    calls = Calls()
    publisher = QueueLingers(calls, {"status": 60})
    status = [ObjectKey("status", "r", "root:ws", "ns", f"obj-{i}") for i in range(3)]
    publisher([(status[0], "status"), (KEYS[0], "sync")])  # each queue's first key goes at once
    publisher([(status[1], "status"), (KEYS[1], "sync")])
    publisher([(status[2], "status"), (KEYS[2], "sync")])
    wait_for(lambda: KEYS[2] in set(calls.keys()), timeout=5, what="sync's held keys sent after its linger")
    assert set(calls.keys()) == {status[0], *KEYS[:3]}, "status keys still wait for more"
    publisher.close()
    assert sorted(calls.keys()) == sorted([*status, *KEYS[:3]]), "no key lost"
    assert calls.calls[-1] == status[1:], "the status keys went out together"


def test_a_backlog_lingers_long_and_its_reads_are_spaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linger, "BACKLOG_EVERY", 60)
    depths = [5, 0]
    reads: list[int] = []

    def backlog() -> int:
        reads.append(depths[0])
        return depths[0]

    lingers = BacklogLinger(backlog, long=0.5)
    assert lingers() == 0.5, "messages wait in the broker: keys may wait longer"
    depths[0] = 0
    assert lingers() == 0.5 and len(reads) == 1, "the backlog is read again only after BACKLOG_EVERY"
    lingers._next_read = 0  # the next read is due
    assert lingers() == linger.LINGER, "no backlog: keys linger as any queue's do"


def test_a_backlog_that_cannot_be_read_is_logged_counts_as_none_and_is_read_again_later(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(linger, "BACKLOG_EVERY", 0)
    reads: list[str] = []

    def unreachable() -> int:
        reads.append("read")
        raise ConnectionError("broker down")

    lingers = BacklogLinger(unreachable, long=0.5)
    with caplog.at_level(logging.WARNING, logger="syncflow.publish"):
        assert lingers() == linger.LINGER, "an unknown backlog never holds keys back"
        assert lingers() == linger.LINGER
    assert len(reads) == 1, "not read again before BACKLOG_RETRY"
    [record] = [r for r in caplog.records if r.getMessage() == "publish.backlog_unread"]
    assert "broker down" in record.syncflow_fields["error"]  # type: ignore[attr-defined]
    lingers._next_read = 0  # the retry is due
    lingers()
    assert len(reads) == 2


def test_a_linger_that_changes_applies_from_the_next_call() -> None:
    calls = Calls()
    seconds = [0.0]
    publisher = LingeringPublisher(calls, lambda: seconds[0])
    publisher([(KEYS[0], "sync")])
    publisher([(KEYS[1], "sync")])  # no linger: at once
    assert calls.keys() == KEYS[:2]
    seconds[0] = 60.0
    publisher([(KEYS[2], "sync")])  # within 60 s of the last send: held
    assert calls.keys() == KEYS[:2]
    publisher.close()
    assert calls.keys() == KEYS[:3]
