"""The Celery beat schedule. Every entry is safe to run twice at once."""

from __future__ import annotations

from typing import Any

from syncflow.config import Settings
from syncflow.queue.layout import PERIODIC_QUEUE

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Moves due backoff entries, requeues expired leases, republishes lost messages.
    "pump": {
        "task": "syncflow.pump",
        "schedule": 1.0,
        "options": {"queue": PERIODIC_QUEUE, "expires": 10},
    },
    # Each sync rule is resynced once per resync period (jittered in Redis).
    "resync": {
        "task": "syncflow.resync",
        "schedule": 15.0,
        "options": {"queue": PERIODIC_QUEUE, "expires": 60},
    },
}


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """The schedule of every mode plus the entries of the configured mode (e.g. workload heartbeats)."""
    from syncflow.app import modes

    engine = {
        # Rules with a status return: the reported state re-checked once per status period.
        "status-poll": {
            "task": "syncflow.status-poll",
            "schedule": min(15.0, settings.status_period),
            "options": {"queue": PERIODIC_QUEUE, "expires": 60},
        },
        # Rules whose source is polled (upsync): one keyed poll per rule every upsync period.
        "poll-tick": {
            "task": "syncflow.poll-tick",
            "schedule": settings.upsync_period,
            "options": {"queue": PERIODIC_QUEUE, "expires": settings.upsync_period},
        },
    }
    return {**BEAT_SCHEDULE, **engine, **modes.beat_entries(settings)}


def housekeeping_tasks(schedule: dict[str, dict[str, Any]]) -> frozenset[str]:
    """Beat's tasks: thousands a day, so they send no task events and Flower's task list keeps real work."""
    return frozenset(entry["task"] for entry in schedule.values())
