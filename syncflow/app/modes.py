"""The registry of modes and the configured mode's hooks (docs/architecture.md §15.1).

``MODES`` names each mode's ``Mode`` object by import path; it is imported on first use, so the app,
the runtime and the command line call a mode without importing the modes' packages (which import
them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from syncflow.app.mode import Mode

if TYPE_CHECKING:
    from redis import Redis

    from syncflow.config import ModeName, Settings
    from syncflow.queue.budget import RequestBudget
    from syncflow.sync.process import WatchProcess
    from syncflow.sync.worker import RuleWorker

MODES: dict[ModeName, str] = {
    "publish": "syncflow.modes.publish.mode:MODE",
    "workload": "syncflow.modes.workload.mode:MODE",
    "edge": "syncflow.modes.edge.mode:MODE",
    "clusters": "syncflow.modes.clusters.mode:MODE",
}
"""Each mode's ``Mode`` object, as ``module:attribute``."""


def mode_named(name: ModeName) -> Mode:
    """The ``Mode`` object registered as ``name`` (its module imported on first use)."""
    module, _, attribute = MODES[name].partition(":")
    mode = getattr(importlib.import_module(module), attribute)
    if not isinstance(mode, Mode):
        raise TypeError(f"{MODES[name]} is not a Mode")
    return mode


def mode_of(settings: Settings) -> Mode:
    """The configured mode."""
    return mode_named(settings.mode)


def rule_worker(settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
    """The engine's task bodies for the configured mode, in this process."""
    return mode_of(settings).rule_worker(settings, redis, budget)


def beat_entries(settings: Settings) -> dict[str, dict[str, Any]]:
    """The configured mode's own beat schedule entries (none for most modes)."""
    return mode_of(settings).beat_entries(settings)


def next_to_cluster(settings: Settings) -> bool:
    """Whether the mode's processes run next to one cluster (``--kubeconfig``, where the watcher's Lease
    lives): most do; clusters mode's central one serves many, each from its Cluster object."""
    return mode_of(settings).next_to_cluster(settings)


def watch_process(settings: Settings) -> WatchProcess:
    """``syncflow watch`` for the configured mode (its task modules imported: they register the verbs
    the watcher enqueues)."""
    for module in settings.all_task_modules:
        importlib.import_module(module)
    return mode_of(settings).watch_process(settings)


def preflight(settings: Settings) -> None:
    """The configured mode's own start-up checks, if it has any (raise ``PreflightError``)."""
    mode_of(settings).preflight(settings)
