"""Case 1: a target object syncflow did not create, at exactly the place a copy would land, is never
touched, and the conflict is reported where the source's owner sees it — except in the one mode that
documents adoption (publish, as api-syncagent), which merges the source into it and keeps what only
the target set."""

from __future__ import annotations

import re
from typing import Any

from tests.conformance.checks import events, failure_text, fingerprint, wait_ran
from tests.conformance.harness import DEADLINE, ModeHarness, condition
from tests.support.waiting import wait_for

FOREIGN_DATA = {"owner": "the-target-cluster-team", "secret-ish": "target-only-value-9f3a"}
FOREIGN_LABELS = {"team": "platform-7c1e"}
FOREIGN_ANNOTATIONS = {"note": "made-by-hand-4b2d"}
FOREIGN_VALUES = [*FOREIGN_DATA.values(), *FOREIGN_LABELS.values(), *FOREIGN_ANNOTATIONS.values()]


def test_foreign_object_untouched_and_reported(mode: ModeHarness) -> None:
    h, ns = mode, mode.namespace
    h.select(ns)
    where = h.target_location(ns, "claimed")
    foreign = h.create_target(*where, FOREIGN_DATA, labels=FOREIGN_LABELS, annotations=FOREIGN_ANNOTATIONS)
    before = fingerprint(h, foreign)
    h.create_source(ns, "claimed", {"from": "source"})
    h.create_source(ns, "sibling", {"from": "source"})
    h.wait_copy(ns, "sibling")
    wait_ran(h, ns, "claimed")
    if h.adopts_foreign:
        _adopted(h, foreign)
        return

    assert fingerprint(h, h.target(*where)) == before, "the foreign object was changed"
    failure = h.parked(ns, "claimed")
    assert failure is not None, f"{h.key(ns, 'claimed')} is not parked"
    text = failure_text(failure)
    assert "exists" in text and "not created by syncflow" in text, f"parked, not as a foreign object: {text}"

    found = wait_for(
        lambda: events(h, ns, "claimed", "SyncConflict"),
        timeout=DEADLINE,
        what="a SyncConflict Event on the source",
    )
    event = found[-1]
    assert event["type"] == "Warning", event
    message = event["message"]
    assert where[1] in message or "claimed" in message, f"the Event names neither object: {message}"
    leaked = [v for v in [*FOREIGN_VALUES, "sibling"] if v in message]
    assert not leaked, f"the Event names more than the object: {leaked} in {message!r}"

    def one_conflict() -> bool:
        """Conflicts=True, counting this case's one object (a key an earlier case left parked may
        still count while its source's deletion is processed)."""
        c = condition(h.config_conditions(), "Conflicts")
        return bool(c and c["status"] == "True" and re.search(r"\b1 object\b", c.get("message", "")))

    wait_for(
        one_conflict,
        timeout=DEADLINE,
        what=lambda: f"Conflicts=True, 1 object, on the config: {h.config_conditions()}",
    )

    h.delete_source(ns, "claimed")
    wait_for(lambda: h.source(ns, "claimed") is None, timeout=DEADLINE, what="the source to go")
    assert fingerprint(h, h.target(*where)) == before, "the foreign object was changed or deleted"


def _adopted(h: ModeHarness, foreign: dict[str, Any]) -> None:
    """The foreign object became the copy: the source's content merged in, the target's own content,
    labels and annotations kept, nothing parked or reported as a conflict."""
    ns = h.namespace
    copy = wait_for(
        lambda: (c := h.copy_of(ns, "claimed")) and h.content(c).get("from") == "source" and c,
        timeout=DEADLINE,
        what="the source merged into the adopted object",
    )
    assert copy["metadata"]["uid"] == foreign["metadata"]["uid"], "adopted, not replaced"
    assert h.content(copy) == {**FOREIGN_DATA, "from": "source"}, h.content(copy)
    meta = copy["metadata"]
    assert FOREIGN_LABELS.items() <= (meta.get("labels") or {}).items(), meta
    assert FOREIGN_ANNOTATIONS.items() <= (meta.get("annotations") or {}).items(), meta
    assert h.parked(ns, "claimed") is None
    assert (condition(h.config_conditions(), "Conflicts") or {}).get("status") != "True"
