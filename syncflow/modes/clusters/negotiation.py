"""The CRD puller: each type to sync gets a schema in kcp that the Ready clusters take.

Every Ready cluster offers its schema of the type (its CRD, or one synthesised from discovery and
OpenAPI v3 for a built-in type). kcp only knows basic types, so when it does not serve the type the
puller creates a CRD there from the lowest common denominator of the offers (fields present in all).
A CRD the puller made is widened when every Ready cluster takes more, and narrowed only while kcp
holds no object of the type (nothing can be lost). Each cluster is then judged against kcp's schema:
``Accepted`` when it takes every value kcp takes, otherwise ``Incompatible`` with the fields it
lacks, so nothing is sent to it that it cannot take. Verdicts go to ``status.syncedResources``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.cluster import PATH
from syncflow.api.conditions import is_true
from syncflow.kube.crds import storage_version
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.schema_lcd import lowest_common, narrowed
from syncflow.kube.schemas import CRD_PATH, builtin_spec
from syncflow.logs import log_event
from syncflow.modes.clusters.identity import NEGOTIATED_LABEL, SyncedType, endpoint
from syncflow.queue.errors import TransientError, describe
from syncflow.sync.endpoints import ClientCache
from syncflow.sync.reconciler import get_or_none

logger = logging.getLogger("syncflow.clusters")

Obj = dict[str, Any]
SHOWN_FIELDS = 5


@dataclass(frozen=True)
class Verdict:
    """Whether one cluster takes kcp's schema of a type."""

    state: str
    message: str
    version: str = ""


def _schema(spec: Obj, version: str) -> Obj | None:
    for entry in spec.get("versions") or []:
        if entry.get("name") == version and entry.get("served", True):
            schema: Obj = (entry.get("schema") or {}).get("openAPIV3Schema") or {}
            return schema
    return None


def _kind(api: JsonApi, t: SyncedType) -> str | None:
    """The kind ``api`` serves ``t`` as, from its preferred version's discovery (None: not served)."""
    try:
        if t.group:
            version = (api.get(f"/apis/{t.group}").get("preferredVersion") or {}).get("version")
            listing = api.get(f"/apis/{t.group}/{version}") if version else {}
        else:
            listing = api.get("/api/v1")
    except ApiException as exc:
        if exc.status in (404, 503):
            return None
        raise
    return next((r["kind"] for r in listing.get("resources") or [] if r.get("name") == t.plural), None)


def offered_spec(api: JsonApi, t: SyncedType) -> Obj | None:
    """A cluster's CRD spec of ``t``: its CRD's, or synthesised for a built-in type (None: not served)."""
    if t.group:
        crd = get_or_none(api, f"{CRD_PATH}/{t.group_resource}")
        if crd is not None and not crd["metadata"].get("deletionTimestamp"):
            spec: Obj = crd["spec"]
            return spec
    kind = _kind(api, t)
    return builtin_spec(api, t.group, kind) if kind else None


def lowest_common_spec(offers: list[Obj]) -> Obj:
    """A one-version CRD spec every offer takes: the first offer's names, scope and storage version,
    the common schema of the offers that serve that version, the subresources all of them have."""
    base = offers[0]
    version = storage_version(base["versions"])
    name = version["name"]
    same = [o for o in offers if o.get("scope") == base.get("scope") and _schema(o, name) is not None]
    schemas = [schema for o in same if (schema := _schema(o, name)) is not None]
    subresources = {
        sub: value
        for sub, value in (version.get("subresources") or {}).items()
        if all(
            sub in (next(v for v in o["versions"] if v["name"] == name).get("subresources") or {})
            for o in same
        )
    }
    entry: Obj = {
        "name": name,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": lowest_common(schemas)},
    }
    if subresources:
        entry["subresources"] = subresources
    return {"group": base["group"], "names": base["names"], "scope": base["scope"], "versions": [entry]}


def judge(wanted: Obj, offered: Obj | None, t: SyncedType) -> Verdict:
    """Whether a cluster's offer takes every value kcp's spec ``wanted`` takes."""
    what = t.group_resource
    version = storage_version(wanted["versions"])["name"]
    if offered is None:
        return Verdict("Incompatible", f"the cluster does not serve {what}", version)
    if offered.get("scope") != wanted.get("scope"):
        return Verdict(
            "Incompatible",
            f"{what} is {offered.get('scope')}-scoped in the cluster, not {wanted.get('scope')}",
            version,
        )
    mine = _schema(offered, version)
    if mine is None:
        return Verdict("Incompatible", f"the cluster does not serve {what} {version}", version)
    lost = narrowed(_schema(wanted, version) or {}, mine)
    if lost:
        more = f" and {len(lost) - SHOWN_FIELDS} more" if len(lost) > SHOWN_FIELDS else ""
        shown = ", ".join(lost[:SHOWN_FIELDS])
        return Verdict(
            "Incompatible", f"the cluster's {what} {version} takes less than kcp's: {shown}{more}", version
        )
    return Verdict("Accepted", f"{what} {version}: the cluster takes kcp's schema", version)


def _has_objects(kcp: JsonApi, spec: Obj) -> bool:
    version = storage_version(spec["versions"])["name"]
    found = kcp.get(f"/apis/{spec['group']}/{version}/{spec['names']['plural']}", limit="1")
    return bool(found.get("items"))


def _pulled(kcp: JsonApi, t: SyncedType, crd: Obj, offers: list[Obj]) -> Obj:
    """A CRD the puller made, widened (or, while kcp holds no object of it, narrowed) to the offers."""
    spec: Obj = crd["spec"]
    common = lowest_common_spec(offers)
    version = storage_version(common["versions"])["name"]
    stored, wanted = _schema(spec, version), _schema(common, version)
    if stored is None or wanted is None:
        return spec
    wider, narrower = narrowed(wanted, stored), narrowed(stored, wanted)
    if not (wider and not narrower) and not (narrower and not _has_objects(kcp, spec)):
        return spec
    body = {**crd, "spec": {**spec, "versions": common["versions"]}}
    updated = kcp.replace(f"{CRD_PATH}/{t.group_resource}", body)
    log_event(
        logger,
        "clusters.crd_renegotiated",
        resource=t.group_resource,
        widened=bool(wider),
        narrowed=bool(narrower),
    )
    result: Obj = updated["spec"]
    return result


def _create(kcp: JsonApi, t: SyncedType, offers: dict[str, Obj]) -> Obj:
    spec = lowest_common_spec([offers[name] for name in sorted(offers)])
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": t.group_resource,
            "labels": {NEGOTIATED_LABEL: "true"},
            "annotations": {f"{NEGOTIATED_LABEL}-from": ",".join(sorted(offers))},
        },
        "spec": spec,
    }
    try:
        kcp.create(CRD_PATH, crd)
    except ApiException as exc:
        if exc.status == 409:  # another puller was first: judge against what it made
            raise TransientError(f"the CRD of {t.group_resource} was created meanwhile") from None
        raise
    log_event(logger, "clusters.crd_pulled", resource=t.group_resource, clusters=",".join(sorted(offers)))
    return spec


def negotiate(kcp: JsonApi, t: SyncedType, offers: dict[str, Obj | None]) -> dict[str, Verdict]:
    """Make kcp serve ``t`` with a schema the offering clusters take; the verdict of each cluster."""
    served = {name: spec for name, spec in offers.items() if spec is not None}
    crd = get_or_none(kcp, f"{CRD_PATH}/{t.group_resource}") if t.group else None
    if crd is not None:
        ours = (crd["metadata"].get("labels") or {}).get(NEGOTIATED_LABEL) == "true"
        wanted = _pulled(kcp, t, crd, [served[n] for n in sorted(served)]) if ours and served else crd["spec"]
    else:
        kind = _kind(kcp, t)
        native = builtin_spec(kcp, t.group, kind) if kind else None
        if native is not None:
            wanted = native
        elif served and t.group:
            wanted = _create(kcp, t, served)
        else:
            why = "kcp does not serve core type" if not t.group else "no Ready cluster serves"
            return {name: Verdict("Pending", f"{why} {t.group_resource}") for name in offers}
    return {name: judge(wanted, offers[name], t) for name in offers}


def record(kcp: JsonApi, cluster: str, t: SyncedType, verdict: Verdict, types: list[SyncedType]) -> bool:
    """Write one type's verdict into a Cluster's ``status.syncedResources`` (entries of types no longer
    synced are dropped); False when it was there already."""
    path = f"{PATH}/{cluster}"
    for _ in range(3):
        obj = get_or_none(kcp, path)
        if obj is None:
            return False
        old = (obj.get("status") or {}).get("syncedResources") or []
        entry = {
            "group": t.group,
            "resource": t.plural,
            "versions": [verdict.version] if verdict.version else [],
            "state": verdict.state,
            "message": verdict.message,
        }
        entries = [entry if other == t else other.entry(old) for other in types]
        new = [e for e in entries if e is not None]
        if new == old:
            return False
        patch = {
            "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
            "status": {"syncedResources": new},
        }
        try:
            kcp.merge_patch(f"{path}/status", patch)
        except ApiException as exc:
            if exc.status == 409:
                continue
            raise
        log_event(
            logger,
            "clusters.resource",
            cluster=cluster,
            resource=t.group_resource,
            state=verdict.state,
            message=verdict.message,
        )
        return True
    raise TransientError(f'Cluster "{cluster}" kept changing while its syncedResources were written')


def pull(kcp: JsonApi, clusters: ClientCache, t: SyncedType, types: list[SyncedType]) -> None:
    """Negotiate ``t`` over the Ready clusters and record each one's verdict (one that fails to
    answer now is left as it was: its next probe says whether it is still Ready)."""
    offers: dict[str, Obj | None] = {}
    for obj in kcp.get(PATH).get("items") or []:
        meta, status = obj["metadata"], obj.get("status") or {}
        if meta.get("deletionTimestamp") or not is_true(status.get("conditions"), "Ready"):
            continue
        try:
            offers[meta["name"]] = offered_spec(clusters.get(endpoint(meta["name"]), fresh=True), t)
        except Exception as exc:  # one cluster that cannot answer must not hold up the others
            log_event(
                logger,
                "clusters.offer_failed",
                level=logging.WARNING,
                cluster=meta["name"],
                resource=t.group_resource,
                error=f"{type(exc).__name__}: {describe(exc)}"[:512],
            )
    for name, verdict in negotiate(kcp, t, offers).items():
        record(kcp, name, t, verdict, types)
