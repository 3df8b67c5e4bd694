"""The Celery beat schedule. Every entry is safe to run twice at once."""

from __future__ import annotations

from typing import Any

from syncflow.queue.layout import PERIODIC_QUEUE

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Moves due backoff entries, requeues expired leases, republishes lost messages.
    "pump": {
        "task": "syncflow.pump",
        "schedule": 1.0,
        "options": {"queue": PERIODIC_QUEUE, "expires": 10},
    },
    # Publish mode: each PublishedResource is resynced once per resync period (jittered in Redis).
    "resync": {
        "task": "syncflow.resync",
        "schedule": 15.0,
        "options": {"queue": PERIODIC_QUEUE, "expires": 60},
    },
}

HOUSEKEEPING_TASKS = frozenset(entry["task"] for entry in BEAT_SCHEDULE.values())
"""Beat's tasks: thousands a day, so they send no task events and Flower's task list keeps real work."""
