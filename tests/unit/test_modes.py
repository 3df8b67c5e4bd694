"""The mode registry: every name the ``mode`` setting accepts has one ``Mode`` object, found by import
path; the app reaches a mode's hooks through it."""

from __future__ import annotations

from typing import get_args

from syncflow.app import modes
from syncflow.app.mode import Mode
from syncflow.config import ModeName, Settings


def test_every_mode_name_is_registered_once() -> None:
    assert sorted(modes.MODES) == sorted(get_args(ModeName))


def test_each_registered_object_is_a_mode_of_its_name() -> None:
    for name in modes.MODES:
        mode = modes.mode_named(name)
        assert isinstance(mode, Mode)
        assert mode.name == name


def test_optional_hooks_default_or_come_from_the_mode() -> None:
    workload = Settings(mode="workload")
    assert modes.next_to_cluster(workload)
    assert set(modes.beat_entries(workload)) == {"workload-tick"}
    assert not modes.next_to_cluster(Settings(mode="clusters"))
    assert modes.next_to_cluster(Settings(mode="clusters", only_cluster="east"))
    assert modes.mode_named("edge").preflight(Settings(mode="edge")) is None
