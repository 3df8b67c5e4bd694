"""Case 4: when what owns the sync is deleted (PublishedResource, SyncTarget, Cluster, EdgeSyncConfig),
every source it held is released, deleting one then does not hang, and nothing new is synced for it."""

from __future__ import annotations

from tests.conformance.checks import released
from tests.conformance.harness import DEADLINE, ModeHarness, finalizers
from tests.support.waiting import wait_for

SOURCES = ("kept", "doomed")


def test_owner_deleted_releases_every_finalizer(mode: ModeHarness) -> None:
    h, ns = mode, mode.namespace
    h.select(ns)
    for name in SOURCES:
        h.create_source(ns, name, {"name": name})
    for name in SOURCES:
        h.wait_copy(ns, name)
        assert h.finalizer in finalizers(h.source(ns, name)), f"{name} is synced without {h.finalizer}"

    h.delete_owner()
    wait_for(
        lambda: all(released(h, ns, name) for name in SOURCES),
        timeout=DEADLINE,
        what=lambda: (
            f"{h.finalizer} released on every source: "
            + str({name: finalizers(h.source(ns, name)) for name in SOURCES})
        ),
    )
    h.delete_source(ns, "doomed")
    wait_for(
        lambda: h.source(ns, "doomed") is None,
        timeout=DEADLINE,
        what="a source deleted after its owner to go (not hang)",
    )
    h.create_source(ns, "late", {"name": "late"})
    h.barrier(ns)
    assert h.copy_of(ns, "late") is None, "an object created after its owner was deleted got a copy"
    assert h.finalizer not in finalizers(h.source(ns, "late")), (
        f"an object created after its owner was deleted got {h.finalizer}"
    )
