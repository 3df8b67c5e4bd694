"""Edge mode's front-end to the engine: the merged EdgeSyncConfigs as sync rules.

Downsync: one rule per upstream type (``down:<plural>.<group>``) whose selector is the union of the
configs' selectors for it; each config's switches apply to the objects its selectors select
(``switches``); identity placement; a renamed object (a conversion within one kind) keeps its
type and gets its natural name downstream — a renamed CRD also its natural ``spec.group``; a conversion
to another kind is a rule of its own (``down:<plural>.<group>~<name>``). A type whose CRD the p-cluster
does not serve yet waits (pending), so CRDs are established before their objects go down.
Upsync: one polled rule per type (``up:<plural>.<group>``) from the p-cluster into the mailbox.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from syncflow.api.edgesyncconfig import Conversion, EdgeSyncConfig, ResourceSelector
from syncflow.kube.jsonapi import JsonApi
from syncflow.modes.edge.merge import CRD_GROUP_KIND, Merged, Selection, TypeKey, merge, type_of
from syncflow.queue.errors import TransientError
from syncflow.sync.discovery import find_resource
from syncflow.sync.registry import RuleEntry
from syncflow.sync.rule import IdentityPlacement, Resource, Selector, SelectorTerm, SetFields, Side, SyncRule
from syncflow.util.selectors import LabelSelector

Obj = dict[str, Any]
KCP = "kcp"
PCLUSTER = "pcluster"
EDGE_SYNC_CONFIGS = "/apis/edge.kcp.io/v1alpha1/edgesyncconfigs"
DISCOVERY_TTL = 60.0


@dataclass(frozen=True)
class Mailbox:
    """The mailbox workspace (its logical cluster) and this syncer's identity."""

    cluster: str
    syncer: str

    @property
    def finalizer(self) -> str:
        """Held on mailbox objects while they have a copy in the p-cluster."""
        return f"edge.kcp.io/syncer-{self.syncer}"


class ConfigOnHold(TransientError):  # noqa: N818 - a state to wait out, not a failure
    """An EdgeSyncConfig is invalid and its last valid spec is not known: the rules stay as they are
    (the watcher's pass and any task that needs the rules retry until the spec is fixed)."""


def _term(selector: ResourceSelector) -> SelectorTerm:
    dumped = selector.model_dump(by_alias=True, exclude_none=True, mode="json")
    return SelectorTerm(
        namespaces=(selector.namespace,) if selector.namespace else (),
        names=(selector.name,) if selector.name else (),
        labels=str(LabelSelector.from_dict(dumped.get("labelSelector"))),
        annotations=str(LabelSelector.from_dict(dumped.get("annotationSelector"))),
    )


def upstream_form(selector: ResourceSelector, conversions: list[Conversion]) -> ResourceSelector:
    """A selector naming the natural (downstream) form of a converted object selects its mailbox form."""
    for conversion in conversions:
        down = conversion.downstream
        if (down.group, down.kind, down.name) == (selector.group, selector.kind, selector.name):
            up = conversion.upstream
            return selector.model_copy(
                update={"group": up.group, "version": up.version, "kind": up.kind, "name": up.name}
            )
    return selector


@dataclass(frozen=True)
class Switches:
    """A downsync rule's per-object switches: an object follows the configs whose selectors select it.

    Status returns when any of them returns reported state (returning it never changes the
    p-cluster); the copy is kept when any of them keeps it (deletion propagates only when all of them
    propagate it, so no config's copy is deleted behind its back)."""

    status: Literal["return", "none"]
    status_for: Selector | None
    keep: Selector | None


def switches(selections: Sequence[Selection]) -> Switches:
    """The switches of one rule from the selections of its type (each with its config's switches)."""
    returning = tuple(_term(s.selector) for s in selections if s.return_reported_state)
    kept = tuple(_term(s.selector) for s in selections if not s.propagate_deletion)
    return Switches(
        status="return" if returning else "none",
        status_for=None if len(returning) in (0, len(selections)) else Selector(any_of=returning),
        keep=Selector(any_of=kept) if kept else None,
    )


def _resource_name(resource: Resource) -> str:
    return resource.group_resource


@dataclass
class EdgeRules:
    """Computes the rules of the merged EdgeSyncConfigs (watch side)."""

    mailbox_api: JsonApi
    pcluster_api: JsonApi
    mailbox: Mailbox
    agent: str
    state_namespace: str
    _found: dict[tuple[str, TypeKey], tuple[float, Resource]] = field(default_factory=dict)
    _last_valid: dict[str, EdgeSyncConfig] = field(default_factory=dict)

    def configs(self) -> list[EdgeSyncConfig]:
        """Every EdgeSyncConfig of the mailbox that is not being deleted.

        A config whose spec is invalid (reported on its status by a task) counts with its last valid
        spec, so an invalid edit never deselects — and deletes — what it selected; with none known
        (e.g. after a restart) ``ConfigOnHold`` holds every rule as it is until the spec is fixed."""
        valid, seen = [], set()
        for obj in self.mailbox_api.get(EDGE_SYNC_CONFIGS).get("items") or []:
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            uid = str(meta.get("uid", ""))
            seen.add(uid)
            try:
                self._last_valid[uid] = EdgeSyncConfig.parse(obj)
            except ValueError as exc:
                if uid not in self._last_valid:
                    raise ConfigOnHold(f"EdgeSyncConfig {meta['name']} is invalid: {exc}") from None
            valid.append(self._last_valid[uid])
        for uid in set(self._last_valid) - seen:
            del self._last_valid[uid]
        return valid

    def desired(self) -> Mapping[str, RuleEntry]:
        """One entry per downsynced and upsynced type (and per conversion to another kind) of the
        EdgeSyncConfigs that are not being deleted."""
        merged = merge(self.configs())
        entries: dict[str, RuleEntry] = {}
        down: dict[TypeKey, list[Selection]] = {}
        for selections in merged.down.values():
            for selection in selections:
                converted = upstream_form(selection.selector, merged.conversions)
                down.setdefault(type_of(converted), []).append(replace(selection, selector=converted))
        for key, found in sorted(down.items()):
            entries.update(self._down(key, found, merged))
        for key, selectors in sorted(merged.up.items()):
            entries.update(self._up(key, selectors))
        return entries

    def _resolve(self, api: JsonApi, key: TypeKey, where: str) -> Resource | str:
        """The type as ``api`` serves it; a type found is trusted for ``DISCOVERY_TTL`` (rule passes run
        every 2 s), one not served yet is looked up again on every pass."""
        now = time.monotonic()
        cached = self._found.get((api.host, key))
        if cached is not None and now - cached[0] < DISCOVERY_TTL:
            return cached[1]
        group, version, kind = key
        found = find_resource(api, group, version, kind=kind)
        if found is None:
            return f"{kind}.{group or 'core'}/{version} is not served by the {where} yet"
        self._found[(api.host, key)] = (now, found)
        return found

    def _down(self, key: TypeKey, selections: list[Selection], merged: Merged) -> dict[str, RuleEntry]:
        upstream = self._resolve(self.mailbox_api, key, "mailbox workspace")
        if isinstance(upstream, str):
            return {f"down:{key[2].lower()}.{key[0]}": RuleEntry.pending(upstream)}
        name = f"down:{_resource_name(upstream)}"
        conversions = [c for c in merged.conversions if type_of(c.upstream) == key]
        renames = [c for c in conversions if (c.downstream.group, c.downstream.kind) == (key[0], key[2])]
        others = [c for c in conversions if c not in renames]
        entries: dict[str, RuleEntry] = {}
        downstream = self._resolve(self.pcluster_api, key, "p-cluster")
        base = Selector(
            any_of=tuple(_term(s.selector) for s in selections),
            exclude_names=tuple(c.upstream.name for c in others),
        )
        per_object = switches(selections)
        entries[name] = (
            RuleEntry.pending(downstream)
            if isinstance(downstream, str)
            else RuleEntry.ready(self._down_rule(name, upstream, downstream, base, renames, per_object))
        )
        for conversion in others:
            target_key = type_of(conversion.downstream)
            target = self._resolve(self.pcluster_api, target_key, "p-cluster")
            rule_name = f"{name}~{conversion.upstream.name}"
            if isinstance(target, str):
                entries[rule_name] = RuleEntry.pending(target)
                continue
            only = Selector(names=(conversion.upstream.name,))
            entries[rule_name] = RuleEntry.ready(
                self._down_rule(rule_name, upstream, target, only, [conversion], per_object)
            )
        return entries

    def _down_rule(
        self,
        name: str,
        upstream: Resource,
        downstream: Resource,
        selector: Selector,
        conversions: list[Conversion],
        per_object: Switches,
    ) -> SyncRule:
        renames = {c.upstream.name: c.downstream.name for c in conversions}
        crd_groups = tuple(
            SetFields(name=c.upstream.name, fields={"spec.group": c.downstream.name.split(".", 1)[1]})
            for c in conversions
            if (c.downstream.group, c.downstream.kind) == CRD_GROUP_KIND and "." in c.downstream.name
        )
        return SyncRule(
            name=name,
            agent=self.agent,
            source=Side(endpoint=KCP, resource=upstream, cluster=self.mailbox.cluster),
            target=Side(endpoint=PCLUSTER, resource=downstream),
            selector=selector,
            placement=IdentityPlacement(names=renames),
            transforms=crd_groups,
            status=per_object.status,
            status_for=per_object.status_for,
            deletion="propagate",
            unmatched="delete",
            release="delete",
            keep=per_object.keep,
            finalizer=self.mailbox.finalizer,
            state_namespace=self.state_namespace,
        )

    def _up(self, key: TypeKey, selectors: list[ResourceSelector]) -> dict[str, RuleEntry]:
        source = self._resolve(self.pcluster_api, key, "p-cluster")
        if isinstance(source, str):
            return {f"up:{key[2].lower()}.{key[0]}": RuleEntry.pending(source)}
        name = f"up:{_resource_name(source)}"
        target = self._resolve(self.mailbox_api, key, "mailbox workspace (bind the APIExport that serves it)")
        if isinstance(target, str):
            return {name: RuleEntry.pending(target)}
        rule = SyncRule(
            name=name,
            agent=self.agent,
            source=Side(endpoint=PCLUSTER, resource=source, cluster=self.mailbox.syncer),
            target=Side(endpoint=KCP, resource=target, cluster=self.mailbox.cluster),
            selector=Selector(any_of=tuple(_term(s) for s in selectors)),
            status="carry",
            unmatched="delete",
            finalizer=None,
            watch_source=False,
        )
        return {name: RuleEntry.ready(rule)}
