"""The judgements of ``bench.soak``: which deletions of copies the soak accounts for, and when a check
has converged."""

from __future__ import annotations

from typing import Any

import pytest

from bench import soakwatch
from bench.soakforeign import Verdict
from bench.soakreport import Tally
from bench.soaktargets import SourceRef
from bench.soakwatch import DeletionWatch

REF = SourceRef("root:org:ws", "ns-0", "soak-1")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Target:
    """What the watch reads of a SoakTarget: a copy's source."""

    @staticmethod
    def ref_of(obj: dict[str, Any]) -> SourceRef | None:
        return REF if obj["metadata"]["name"] == "copy" else None


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(soakwatch.time, "monotonic", clock)
    return clock


def deleted(watch: DeletionWatch, name: str = "copy") -> None:
    watch.event({"type": "DELETED", "object": {"metadata": {"uid": "u1", "name": name, "namespace": "n"}}})


def test_a_copy_deleted_by_the_soak_is_legitimate_once(clock: Clock) -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]
    watch.caused(REF, "copy deleted", local=True)
    deleted(watch)
    deleted(watch)

    assert watch.legitimate == 1
    assert [(ref, place) for _, ref, place in watch.spurious] == [(REF, "n/copy")]


def test_a_deleted_source_accounts_for_its_copy_however_late(clock: Clock) -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]
    watch.caused(REF, "source deleted", local=False)
    clock.now += 3600  # e.g. the target was paused

    deleted(watch)

    assert (watch.legitimate, watch.spurious) == (1, [])


def test_a_re_created_source_ends_what_its_deletion_accounts_for(clock: Clock) -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]
    watch.caused(REF, "source deleted", local=False)  # its copy was already gone: no event comes
    watch.recreated(REF)
    clock.now += 61

    deleted(watch)

    assert watch.legitimate == 0
    assert len(watch.spurious) == 1


def test_a_refused_deletion_accounts_for_nothing(clock: Clock) -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]
    cause = watch.caused(REF, "copy deleted", local=True)
    watch.withdraw(REF, cause)

    deleted(watch)

    assert len(watch.spurious) == 1


def test_a_copy_of_no_known_source_is_spurious(clock: Clock) -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]
    watch.caused(REF, "copy deleted", local=True)

    deleted(watch, "other")

    assert [(ref, place) for _, ref, place in watch.spurious] == [(None, "n/other")]


def test_a_watch_error_event_breaks_the_watch() -> None:
    watch = DeletionWatch(Target(), grace=60)  # type: ignore[arg-type]

    with pytest.raises(soakwatch.WatchBrokenError):
        watch.event({"type": "ERROR", "object": {"code": 410, "message": "too old"}})


def test_settled_needs_the_expected_conflicts_and_adoptions() -> None:
    assert Tally(conflicts_expected=2, conflicts_found=2).settled
    assert not Tally(conflicts_expected=2, conflicts_found=1).settled
    assert not Tally(foreign=Verdict(adopted=1, adoptable=2)).settled
    assert not Tally(parked=1).settled


def test_touched_foreign_objects_and_spurious_deletions_are_never_clean() -> None:
    assert Tally().clean
    assert not Tally(foreign=Verdict(changed=1)).clean
    assert not Tally(foreign=Verdict(deleted=1)).clean
    assert not Tally(spurious=1).clean
