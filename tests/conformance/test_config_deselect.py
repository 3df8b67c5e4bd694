"""Case 3: when the config stops selecting sources (narrowed, or deleted), syncflow lets go of them —
no finalizer of the mode left, their copies deleted or kept as the mode documents — and of nothing else:
a foreign object among the copies is never touched."""

from __future__ import annotations

from collections.abc import Callable

from tests.conformance.checks import fingerprint, released
from tests.conformance.harness import DEADLINE, ModeHarness, Obj
from tests.support.waiting import wait_for

SOURCES = ("first", "second")


def _deselected(h: ModeHarness, deselect: Callable[[], None], copies_deleted: bool) -> None:
    """Two synced sources and a foreign object beside their copies; ``deselect``; then only the sources
    are let go of, and their copies deleted (``copies_deleted``) or kept."""
    ns = h.namespace
    h.select(ns)
    for name in SOURCES:
        h.create_source(ns, name, {"name": name})
    copies = {name: h.wait_copy(ns, name) for name in SOURCES}
    target_ns = copies["first"]["metadata"]["namespace"]
    bystander = h.create_target(target_ns, "bystander", {"mine": "not-syncflow's"}, labels={"team": "local"})
    before = fingerprint(h, bystander)

    def touched() -> bool:
        return fingerprint(h, h.target(target_ns, "bystander")) != before

    deselect()
    wait_for(
        lambda: all(released(h, ns, name) for name in SOURCES) or touched(),
        timeout=DEADLINE,
        what=lambda: f"{h.finalizer} released on {', '.join(SOURCES)}",
    )
    assert not touched(), "the foreign object beside the copies was changed or deleted"
    assert all(released(h, ns, name) for name in SOURCES)
    if copies_deleted:
        wait_for(
            lambda: all(h.copy_of(ns, name) is None for name in SOURCES) or touched(),
            timeout=DEADLINE,
            what="the copies to be deleted",
        )
        assert not touched(), "the foreign object beside the copies was changed or deleted"
    else:
        kept = {name: uid(h.copy_of(ns, name)) for name in SOURCES}
        assert kept == {name: uid(copies[name]) for name in SOURCES}, (
            f"copies deleted or replaced, but {h.mode} mode documents keeping them: {kept}"
        )


def uid(obj: Obj | None) -> str | None:
    """An object's UID (None: no object)."""
    return str(obj["metadata"]["uid"]) if obj is not None else None


def test_config_narrowed_lets_go_of_own_copies_only(mode: ModeHarness) -> None:
    _deselected(mode, mode.narrow, mode.narrow_deletes_copies)


def test_config_deleted_lets_go_of_own_copies_only(mode: ModeHarness) -> None:
    _deselected(mode, mode.delete_config, mode.delete_deletes_copies)
