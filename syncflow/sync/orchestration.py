"""The sync manager: publishes the rules a mode wants and runs one pair of watches per ready rule.

Each pass asks the mode's front-end for its rules (computed from its API objects), writes them to
the rule registry, then starts the watches of rules that became ready and stops those of rules that
changed, went pending or went away (kopf's orchestration, api-syncagent's syncmanager). A source
watch maps each event to the object's ``sync`` key; a target watch maps a copy's change to its
source object's ``status`` key (its deletion to ``sync``, which re-creates it; for a rule that
reverts drift, a change of its content also to ``sync``); events that change nothing a task reads
add nothing (``syncflow.sync.eventkeys``). Rules with related resources also get ``related`` keys
from both, and one watch per related resource and side, shared by every rule that uses it, maps
related objects' events through the related index.

A rule that went away gets a ``release`` key (its finalizers released, its copies kept or deleted by
its policy); at the start of a term, so does every gone rule whose release has not completed. A rule
whose definition changed gets a ``sweep`` key: what it no longer selects is released at once, not at
the next resync.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from syncflow.kube.bookmarks import Bookmarks
from syncflow.kube.jsonapi import UNREACHABLE, JsonApi
from syncflow.kube.watch import ResourceWatch
from syncflow.metrics import record as metrics
from syncflow.queue.reachability import Reachability
from syncflow.sync.endpoints import Endpoints
from syncflow.sync.eventkeys import SourceKeys, TargetKeys
from syncflow.sync.keys import RELEASE, SWEEP, poll_key, rule_key
from syncflow.sync.metadata import AGENT_LABEL
from syncflow.sync.registry import RuleEntry, RuleRegistry
from syncflow.sync.related.index import RelatedIndex
from syncflow.sync.related.watches import RelatedEvents, related_sides
from syncflow.sync.rule import Resource, SyncRule
from syncflow.sync.watches import Enqueue, KeyHandler, WatchSet
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.watch")

DesiredRules = Callable[[], Mapping[str, RuleEntry]]
"""A mode's front-end: the rules its API objects ask for now, by name (absent: gone)."""


@dataclass
class SyncManager:
    """Keeps the registry and the per-rule watches in line with what the mode wants."""

    desired: DesiredRules
    registry: RuleRegistry
    endpoints: Endpoints
    enqueue: Enqueue
    bookmarks: Bookmarks
    replay: Callable[[str], object] | None = None
    """Retries the keys that failed for a cause (``QueueService.replay_cause``)."""
    redis: Reachability | None = None
    """Whether the Redis of the registry and queue answers (said once per change by the watcher)."""
    watch_options: dict[str, Any] = field(default_factory=dict)
    watches: WatchSet = field(default_factory=WatchSet)
    _running: dict[str, tuple[SyncRule, tuple[tuple[JsonApi, ...], JsonApi]]] = field(default_factory=dict)
    _related: dict[str, RelatedEvents] = field(default_factory=dict)
    _released_once: bool = False

    def reconcile(self) -> None:
        """One pass: publish the wanted rules, then start and stop watches to match."""
        wanted = dict(self.desired())
        ready = _without_overlaps(wanted)
        gone = [] if self._released_once else self.registry.unreleased()
        published = self.registry.publish(wanted)
        for name in published:
            entry = wanted.get(name)
            if entry is None:
                gone.append(name)
            log_event(
                logger,
                "rule.changed",
                rule=name,
                state=entry.state if entry else "gone",
                reason=entry.reason if entry else "",
            )
        self._released_once = False  # until the keys are queued: a failed pass looks at every gone rule
        self._enqueue_for_rules(RELEASE, gone)
        self._released_once = True
        # a running rule whose entry another process had marked gone (its keys claimed meanwhile ended
        # there): published again as it runs, a sweep brings back what those keys were for
        runs = {name: rule for name, (rule, _) in self._running.items()}
        restored = [name for name in published if name in ready and runs.get(name) == ready[name]]
        self._enqueue_for_rules(SWEEP, restored)
        self._poll_at_once([ready[name] for name in published if name in ready])
        metrics.rules({name: entry.state == "ready" for name, entry in wanted.items()})
        clients: dict[str, tuple[tuple[JsonApi, ...], JsonApi]] = {}
        failed: set[str] = set()
        for name, rule in ready.items():
            if not rule.watch_source:
                continue
            try:
                clients[name] = (
                    tuple(self.endpoints.everywhere(rule.source.endpoint)),
                    self.endpoints.api(rule.target.endpoint, rule.target.cluster or ""),
                )
            except Exception as exc:  # one endpoint that cannot be resolved must not hold up the others
                failed.add(name)
                log_event(logger, "rule.endpoint_failed", level=logging.WARNING, rule=name, error=str(exc))
        for name, (rule, running) in list(self._running.items()):
            if name in failed and ready.get(name) == rule:
                continue  # keep what runs until its endpoints resolve again
            now = clients.get(name)
            changed = ready.get(name) != rule  # a new selector may select what the old one skipped: relist
            # a client built anew (e.g. its endpoint's kubeconfig changed) restarts the rule's watches
            if changed or now is None or not _same_clients(now, running):
                self._stop(name, forget=changed)
            if changed and name in ready:
                self._enqueue_for_rules(SWEEP, [name])
        for name, (apis, target) in clients.items():
            if name not in self._running:
                self._start(ready[name], apis, target)
        self._reconcile_related([rule for name, rule in ready.items() if name in self._running])

    def _poll_at_once(self, rules: list[SyncRule]) -> None:
        """A polled rule that is new or changed is polled now, not one upsync period later."""
        polled = [poll_key(rule) for rule in rules if not rule.watch_source]
        if polled:
            self.enqueue(polled, False)

    def _enqueue_for_rules(self, verb: str, names: list[str]) -> None:
        if names:
            agent = self.registry.agent
            self.enqueue([rule_key(verb, name, agent) for name in dict.fromkeys(names)], False)
            log_event(logger, f"rule.{verb}_enqueued", rules=",".join(names))

    def stop_all(self) -> None:
        """Stop every watch (the term ended: another replica now reports the rules)."""
        self.watches.stop_all()
        self._running.clear()
        self._related.clear()
        metrics.rules({})

    def _reconcile_related(self, rules: list[SyncRule]) -> None:
        """Run one watch per related resource, endpoint and shard that these rules use; stop the rest."""
        users: dict[tuple[str, Resource], list[SyncRule]] = {}
        for rule in rules:
            for side in dict.fromkeys(related_sides(rule)):
                users.setdefault(side, []).append(rule)
        wanted: set[str] = set()
        for (endpoint, resource), using in users.items():
            for index, api in enumerate(self.endpoints.everywhere(endpoint)):
                name = f"related:{endpoint}:{resource.group_resource}/{resource.version}:{index}:{api.host}"
                wanted.add(name)
                if name not in self._related:
                    self._start_related(name, api, endpoint, resource, using[0].agent)
                self._related[name].rules = using
        unwanted = sorted(set(self._related) - wanted)
        self.watches.stop(*unwanted)
        for name in unwanted:
            del self._related[name]

    def _start_related(self, name: str, api: JsonApi, endpoint: str, resource: Resource, agent: str) -> None:
        handler = RelatedEvents(
            endpoint, resource, RelatedIndex(self.registry.redis, agent), self.endpoints, self.enqueue
        )
        self._related[name] = handler
        self.watches.start(
            name,
            ResourceWatch(
                api.api,
                api.prefix + resource.path(),
                name,
                handler,
                self.bookmarks,
                echo_side=endpoint,
                **self.watch_options,
            ),
        )

    def _watch_names(self, name: str) -> list[str]:
        return [w for w in self.watches.watches if w.startswith((f"source:{name}:", f"target:{name}:"))]

    def _stop(self, name: str, *, forget: bool = False) -> None:
        watches = self._watch_names(name)
        self.watches.stop(*watches)
        for watch in watches if forget else ():
            self.bookmarks.forget(watch)
        del self._running[name]
        log_event(logger, "rule.sync_stopped", rule=name)

    def connected(self, endpoint: str) -> Callable[[], None] | None:
        """What to do when a watch of ``endpoint`` (re)connects: retry the keys that failed to reach it."""
        replay = self.replay
        if replay is None:
            return None
        return lambda: _replay(replay, f"{UNREACHABLE}{endpoint}")

    def _start(self, rule: SyncRule, sources: tuple[JsonApi, ...], target: JsonApi) -> None:
        for index, api in enumerate(sources):
            name = f"source:{rule.name}:{index}:{api.host}"
            self.watches.start(
                name,
                ResourceWatch(
                    api.api,
                    api.prefix + rule.source.resource.path(),
                    name,
                    KeyHandler(self.enqueue, SourceKeys(rule)),
                    self.bookmarks,
                    label_selector=rule.selector.labels,
                    echo_side=rule.source.endpoint,
                    keep_snapshots=True,
                    endpoint=rule.source.endpoint,
                    on_connected=self.connected(rule.source.endpoint),
                    **self.watch_options,
                ),
            )
        name = f"target:{rule.name}:{target.host}"
        self.watches.start(
            name,
            ResourceWatch(
                target.api,
                target.prefix + rule.target.resource.path(),
                name,
                KeyHandler(self.enqueue, TargetKeys(rule)),
                self.bookmarks,
                label_selector=f"{AGENT_LABEL}={rule.agent}",
                echo_side=rule.target.endpoint,
                keep_snapshots=True,
                endpoint=rule.target.endpoint,
                on_connected=self.connected(rule.target.endpoint),
                **self.watch_options,
            ),
        )
        self._running[rule.name] = (rule, (sources, target))
        log_event(
            logger,
            "rule.sync_started",
            rule=rule.name,
            source=f"{rule.source.endpoint}:{rule.source.resource.path()}",
            target=f"{rule.target.endpoint}:{rule.target.resource.path()}",
        )

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """Whether every running watch has listed and is connected, with per-watch details."""
        statuses = self.watches.statuses()
        return all(s["synced"] and s["healthy"] for s in statuses.values()), {"watches": statuses}


def _replay(replay: Callable[[str], object], cause: str) -> None:
    """Retry the keys that failed for ``cause``; a failure (e.g. Redis away) is logged, never raised into a
    watch thread."""
    try:
        replayed = replay(cause)
    except Exception as exc:
        log_event(
            logger,
            "rule.replay_failed",
            level=logging.WARNING,
            cause=cause,
            error=f"{type(exc).__name__}: {exc}",
        )
        return
    if replayed:
        log_event(logger, "rule.replayed", cause=cause, keys=replayed)


def _same_clients(
    wanted: tuple[tuple[JsonApi, ...], JsonApi], running: tuple[tuple[JsonApi, ...], JsonApi]
) -> bool:
    """Same source URLs and the very same target client."""
    return [a.host for a in wanted[0]] == [a.host for a in running[0]] and wanted[1] is running[1]


def _without_overlaps(wanted: dict[str, RuleEntry]) -> dict[str, SyncRule]:
    """Ready rules; a rule whose target resource another ready rule already writes becomes pending
    (a copy must belong to exactly one rule, or a status event could reach the wrong rule)."""
    ready: dict[str, SyncRule] = {}
    owners: dict[tuple[str, str | None, str], str] = {}
    for name in sorted(wanted):
        rule = wanted[name].rule
        if wanted[name].state != "ready" or rule is None:
            continue
        target = (rule.target.endpoint, rule.target.cluster, rule.target.resource.group_resource)
        if target in owners:
            wanted[name] = RuleEntry.pending(
                f"{rule.target.resource.group_resource} on {rule.target.endpoint} is already the target of "
                f"rule {owners[target]}"
            )
            continue
        owners[target] = name
        ready[name] = rule
    return ready
