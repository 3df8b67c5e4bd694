"""Case 2: the target's system namespaces are out of reach — no source writes into ``kube-system``, and
an edge config over every Namespace changes or deletes none of the target's own."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.checks import failure_text, fingerprint
from tests.conformance.harness import DEADLINE, ModeHarness, Obj, ensure_namespace, finalizers, read
from tests.conformance.modes.edge import EdgeHarness
from tests.support.waiting import wait_for

SYSTEM = "kube-system"
NAMESPACES = "/api/v1/namespaces"


def test_system_namespace_is_out_of_reach(mode: ModeHarness) -> None:
    h = mode
    if h.same_namespace_skip:
        pytest.skip(h.same_namespace_skip)
    h.select(SYSTEM, same_namespace=True)
    name = f"cf-{h.case}"
    where = h.target_location(SYSTEM, name)
    assert where[0] == SYSTEM, f"the case's config places the copy in {where[0]}, not in {SYSTEM}"
    h.create_source(SYSTEM, name, {"reach": SYSTEM})
    wait_for(
        lambda: h.parked(SYSTEM, name) or h.target(*where) is not None,
        timeout=DEADLINE,
        what=f"{h.key(SYSTEM, name)} to be parked",
    )
    assert h.target(*where) is None, f"a source was copied into {SYSTEM} on the target"
    failure = h.parked(SYSTEM, name)
    assert failure is not None and SYSTEM in failure_text(failure), (
        f"parked without naming {SYSTEM}: {failure and failure_text(failure)}"
    )


PREEXISTING = "preexisting"
SIGNAL = "cf-ns-signal"
"""A Namespace only in the mailbox: its copy says the config's Namespaces are being synced."""


def _namespace_fingerprint(h: EdgeHarness, name: str) -> dict[str, Any] | None:
    found = read(h.target_api, f"{NAMESPACES}/{name}")
    if found is None:
        return None
    meta = found["metadata"]
    return {k: meta.get(k) or {} for k in ("labels", "annotations")} | {"rv": meta["resourceVersion"]}


def _wait_keys_ran(h: EdgeHarness, names: tuple[str, ...]) -> None:
    keys = [h.namespace_key(name) for name in names]
    sync = h.queue().queues["sync"]
    wait_for(lambda: not sync.held(keys), timeout=DEADLINE, what=f"the syncs of Namespaces {names} to run")


@pytest.mark.parametrize("harness", ["edge"], indirect=True)
def test_edge_namespace_config_leaves_the_targets_own(mode: ModeHarness) -> None:
    h = mode
    assert isinstance(h, EdgeHarness)
    own = ("default", SYSTEM, PREEXISTING)
    ensure_namespace(h.target_api, PREEXISTING)
    local: Obj = {"metadata": {"name": "target-only"}, "data": {"kept": "here"}}
    h.target_api.create(f"{NAMESPACES}/{PREEXISTING}/configmaps", local)
    for name in (*own, SIGNAL):
        ensure_namespace(h.source_api, name)
    before = {name: _namespace_fingerprint(h, name) for name in own}
    local_before = fingerprint(h, h.target(PREEXISTING, "target-only"))

    def touched() -> list[str]:
        changed = [name for name in own if _namespace_fingerprint(h, name) != before[name]]
        if fingerprint(h, h.target(PREEXISTING, "target-only")) != local_before:
            changed.append(f"{PREEXISTING}/target-only")
        return changed

    h.select_namespaces()
    wait_for(
        lambda: h.target_api.exists(f"{NAMESPACES}/{SIGNAL}") or touched(),
        timeout=DEADLINE,
        what=f"Namespace {SIGNAL} to be copied",
    )
    _wait_keys_ran(h, own)
    assert not touched(), f"the target's own Namespaces were changed: {touched()}"

    h.delete_config()
    wait_for(
        lambda: h.finalizer not in finalizers(read(h.source_api, f"{NAMESPACES}/{SIGNAL}")) or touched(),
        timeout=DEADLINE,
        what=f"{h.finalizer} released on Namespace {SIGNAL}",
    )
    _wait_keys_ran(h, (*own, SIGNAL))
    assert not touched(), f"the target's own Namespaces were changed or deleted: {touched()}"
