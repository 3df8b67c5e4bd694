"""The configured mode's hooks (docs/architecture.md §15.1), found by name: ``importlib`` loads
``syncflow.modes.<mode>.context``, so the app, the runtime and the command line call a mode without
importing the modes' packages (which import them).

A mode's ``context`` module has ``rule_worker(settings, redis, budget)`` (the engine's task bodies
with the mode's endpoints, built once per process) and ``watch_process(settings)`` (``syncflow
watch``), and optionally ``beat_entries(settings)``, ``next_to_cluster(settings)`` and
``preflight(settings)``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis import Redis

    from syncflow.config import Settings
    from syncflow.queue.budget import RequestBudget
    from syncflow.sync.process import WatchProcess
    from syncflow.sync.worker import RuleWorker


def _context(settings: Settings) -> object:
    return importlib.import_module(f"syncflow.modes.{settings.mode}.context")


def rule_worker(settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
    """The engine's task bodies for the configured mode, in this process."""
    worker: RuleWorker = _context(settings).rule_worker(settings, redis, budget)  # type: ignore[attr-defined]
    return worker


def beat_entries(settings: Settings) -> dict[str, dict[str, Any]]:
    """The configured mode's own beat schedule entries (none for most modes)."""
    entries = getattr(_context(settings), "beat_entries", None)
    return dict(entries(settings)) if entries is not None else {}


def next_to_cluster(settings: Settings) -> bool:
    """Whether the mode's processes run next to one cluster (``--kubeconfig``, where the watcher's Lease
    lives): most do; clusters mode's central one serves many, each from its Cluster object."""
    hook = getattr(_context(settings), "next_to_cluster", None)
    return bool(hook(settings)) if hook is not None else True


def watch_process(settings: Settings) -> WatchProcess:
    """``syncflow watch`` for the configured mode (its task modules imported: they register the verbs
    the watcher enqueues)."""
    for module in settings.all_task_modules:
        importlib.import_module(module)
    process: WatchProcess = _context(settings).watch_process(settings)  # type: ignore[attr-defined]
    return process


def preflight(settings: Settings) -> None:
    """The configured mode's own start-up checks, if it has any (raise ``PreflightError``)."""
    hook = getattr(_context(settings), "preflight", None)
    if hook is not None:
        hook(settings)
