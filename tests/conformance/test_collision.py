"""Case 5: a source whose copy would land on the copy of another source is a name collision: parked,
reported without naming the other object, and the other copy is never flipped back and forth."""

from __future__ import annotations

from syncflow.sync.desired import remote_annotations, remote_labels
from syncflow.sync.ownership import COLLISION
from tests.conformance.checks import events, failure_text, fingerprint
from tests.conformance.harness import DEADLINE, ModeHarness
from tests.support.waiting import wait_for

OTHER_CLUSTER = "othercluster7q2x"
"""The logical cluster of the other source (a workspace the case's owner must not learn of)."""
OTHER_PATH = "root:elsewhere:tenant-x3"
"""Its workspace path."""
OTHER_NAME = "other-owner-obj-k8w3"


def test_two_sources_on_one_target_name_collide(mode: ModeHarness) -> None:
    h, ns = mode, mode.namespace
    h.select(ns)
    where = h.target_location(ns, "contested")
    other = h.create_target(
        *where,
        {"owner": "the-other-source"},
        labels=remote_labels(OTHER_CLUSTER, ns, OTHER_NAME, h.agent_name),
        annotations=remote_annotations(ns, OTHER_NAME, OTHER_PATH),
    )
    before = fingerprint(h, other)

    def changed() -> bool:
        return fingerprint(h, h.target(*where)) != before

    def collisions() -> int:
        """NameCollision Events recorded so far (a repeated Event may be one object with a count)."""
        return sum(int(e.get("count") or 1) for e in events(h, ns, "contested", "NameCollision"))

    def parked_at() -> object:
        """When the key was last parked (None while it is not)."""
        failure = h.parked(ns, "contested")
        return failure and (failure.first_failure, failure.last_failure)

    h.create_source(ns, "contested", {"edit": "0"})
    wait_for(
        lambda: h.parked(ns, "contested") or changed(),
        timeout=DEADLINE,
        what=f"{h.key(ns, 'contested')} to be parked",
    )
    assert not changed(), "the other source's copy was changed"
    failure = h.parked(ns, "contested")
    assert failure is not None and failure.cause == COLLISION, (
        f"parked, not as a name collision: {failure and failure_text(failure)}"
    )
    wait_for(collisions, timeout=DEADLINE, what="a NameCollision Event on the source")

    def edit(value: str) -> None:
        """Edit the source and wait until the edit was synced: parked anew, or one more Event."""
        seen, parked = collisions(), parked_at()
        h.edit_source(ns, "contested", {"edit": value})
        wait_for(
            lambda: collisions() > seen or parked_at() not in (None, parked) or changed(),
            timeout=DEADLINE,
            what=f"the sync of edit {value} (parked again, or one more NameCollision Event)",
        )

    for value in ("1", "2"):
        edit(value)
        assert not changed(), f"the other source's copy was changed after edit {value}"
    still = wait_for(
        lambda: h.parked(ns, "contested"), timeout=DEADLINE, what="the key to be parked again after the edits"
    )
    assert still.cause == COLLISION, failure_text(still)
    event = events(h, ns, "contested", "NameCollision")[-1]
    assert event["type"] == "Warning", event
    leaked = [v for v in (OTHER_CLUSTER, OTHER_PATH, OTHER_NAME) if v in event["message"]]
    assert not leaked, f"the Event names the other object: {leaked} in {event['message']!r}"
