"""Operator views of the queue: the text and JSON that ``syncflow queue`` and ``failures`` print."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Failure


def queue_snapshot(service: QueueService) -> dict[str, Any]:
    """Structure sizes per keyed queue, broker messages per Celery queue, event counters and the
    seconds since the last pump run."""
    return {
        "queues": [asdict(stats) for stats in service.stats()],
        "messages": service.broker_backlog(),
        "counters": {name: queue.counters() for name, queue in service.queues.items()},
        "last_pump_s": service.since_last_pump(),
    }


def format_snapshot(snapshot: dict[str, Any]) -> str:
    """The snapshot as two small tables."""
    columns = ("queue", "dirty", "pending", "leased", "delayed", "parked")
    lines = ["".join(f"{c.upper():>10}" for c in columns)]
    lines += ["".join(f"{row[c]!s:>10}" for c in columns) for row in snapshot["queues"]]
    lines.append("")
    lines.append(f"{'MESSAGES':>10}" + "".join(f"{name:>10}" for name in snapshot["messages"]))
    lines.append(" " * 10 + "".join(f"{count:>10}" for count in snapshot["messages"].values()))
    lines.append("")
    last = snapshot["last_pump_s"]
    lines.append(
        f"last pump: {last:.1f} s ago"
        if last is not None
        else "last pump: none for a day (is beat running, and a worker on the periodic queue?)"
    )
    return "\n".join(lines)


def watch_snapshot(service: QueueService, interval: float, echo: Callable[[str], None]) -> None:
    """Print the snapshot every ``interval`` seconds until interrupted."""
    while True:
        echo("\x1b[2J\x1b[H" + time.strftime("%H:%M:%S") + "\n" + format_snapshot(queue_snapshot(service)))
        time.sleep(interval)


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else "-"


def failure_record(failure: Failure) -> dict[str, Any]:
    """A failure as JSON-ready data."""
    return {
        "key": failure.key,
        "queue": failure.queue,
        "attempts": failure.attempts,
        "first_failure": _when(failure.first_failure),
        "last_failure": _when(failure.last_failure),
        "error": failure.error.get("error", ""),
        "type": failure.error.get("type", ""),
        "cause": failure.cause,
    }


def format_failures(failures: list[Failure], *, as_json: bool = False) -> str:
    """One line per parked key (or a JSON list)."""
    records = [failure_record(f) for f in failures]
    if as_json:
        return json.dumps(records, indent=2)
    return "\n".join(
        f"{r['key']}  attempts={r['attempts']}  first={r['first_failure']}  last={r['last_failure']}  "
        + (f"cause={r['cause']}  " if r["cause"] else "")
        + f"{r['type']}: {_one_line(r['error'])}"
        for r in records
    )


def format_failure(failure: Failure) -> str:
    """Everything known about one failing key, with the full traceback."""
    record = failure_record(failure)
    lines = [
        f"{name}: {record[name]}" for name in ("key", "queue", "attempts", "first_failure", "last_failure")
    ]
    lines.append(f"parked: {'yes' if failure.last_failure else 'no (backing off)'}")
    if failure.cause:
        lines.append(f"cause: {failure.cause}")
    lines.append(f"error: {record['type']}: {record['error']}")
    lines.append(failure.error.get("traceback", "").rstrip())
    return "\n".join(lines)


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
