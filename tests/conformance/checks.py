"""What the cases compare and wait for, in the harness's terms."""

from __future__ import annotations

from typing import Any

from syncflow.queue.workqueue import Failure
from tests.conformance.harness import DEADLINE, ModeHarness, Obj, finalizers
from tests.support.waiting import wait_for


def fingerprint(harness: ModeHarness, obj: Obj | None) -> dict[str, Any] | None:
    """What must not change on an object syncflow must leave alone: content, labels, annotations,
    resourceVersion (None: the object is gone)."""
    if obj is None:
        return None
    meta = obj["metadata"]
    return {
        "content": harness.content(obj),
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "resourceVersion": meta["resourceVersion"],
    }


def failure_text(failure: Failure) -> str:
    """Everything a parked key's failure record says: error type, message and cause."""
    error = failure.error
    return " ".join(str(part) for part in (error.get("type"), error.get("error"), failure.cause) if part)


def wait_ran(harness: ModeHarness, namespace: str, name: str) -> None:
    """Wait until no run of the source's sync key is still to come. Call it once an object created after
    the source has been synced: the source's key was queued before that object's."""
    wait_for(
        lambda: not harness.held(namespace, name),
        timeout=DEADLINE,
        what=f"the sync of {namespace}/{name} to run ({harness.mode})",
    )


def released(harness: ModeHarness, namespace: str, name: str) -> bool:
    """Whether the source holds no finalizer of the mode (or is gone)."""
    return harness.finalizer not in finalizers(harness.source(namespace, name))


def events(harness: ModeHarness, namespace: str, name: str, reason: str) -> list[Obj]:
    """The Events with ``reason`` about a source, oldest first."""
    return [e for e in harness.events_for(namespace, name) if e.get("reason") == reason]
