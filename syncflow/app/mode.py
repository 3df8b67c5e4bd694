"""What a mode is to the rest of syncflow (docs/architecture.md §15.1): one ``Mode`` object per mode
package, registered by name in ``syncflow.app.modes``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from redis import Redis

    from syncflow.config import ModeName, Settings
    from syncflow.queue.budget import RequestBudget
    from syncflow.sync.process import WatchProcess
    from syncflow.sync.worker import RuleWorker


class Mode(ABC):
    """A mode's hooks: the engine's task bodies with its endpoints, its watcher, and its optional beat
    entries, placement and start-up checks."""

    name: ClassVar[ModeName]
    """The ``mode`` setting that selects it."""

    @abstractmethod
    def rule_worker(self, settings: Settings, redis: Redis, budget: RequestBudget | None) -> RuleWorker:
        """The engine's task bodies with the mode's endpoints (built once per process)."""

    @abstractmethod
    def watch_process(self, settings: Settings) -> WatchProcess:
        """``syncflow watch``: the Lease client and a factory of the term's watcher."""

    def beat_entries(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """The mode's own beat schedule entries (none by default)."""
        return {}

    def next_to_cluster(self, settings: Settings) -> bool:
        """Whether the mode's processes run next to one cluster (``--kubeconfig``, where the watcher's
        Lease lives)."""
        return True

    def preflight(self, settings: Settings) -> None:
        """The mode's own start-up checks (raise ``PreflightError``); none by default."""
        return None
