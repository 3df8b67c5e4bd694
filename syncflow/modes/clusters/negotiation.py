"""The CRD puller: each type to sync gets a schema in kcp that the Ready clusters take.

Every Ready cluster offers its schema of the type (its CRD, or one synthesised from discovery and
OpenAPI v3 for a built-in type). kcp only knows basic types, so when it does not serve the type the
puller makes it serve one built from the lowest common denominator of the offers (fields present in
all): an APIResourceSchema in the workspace's APIExport ``syncflow-clusters``, bound in the workspace
itself — kcp's way to serve a type, and the only one for built-in groups such as ``apps``, which a CRD
cannot claim. What the puller exported is widened when every Ready cluster takes more, and narrowed
only while kcp holds no object of the type (nothing can be lost). Each cluster is then judged against
kcp's schema: ``Accepted`` when it takes every value kcp takes, otherwise ``Incompatible`` with the
fields it lacks, so nothing is sent to it that it cannot take. Verdicts go to
``status.syncedResources``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.api.cluster import PATH
from syncflow.api.conditions import is_true
from syncflow.kube.crds import storage_version
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.kcp import cluster_identity
from syncflow.kube.schema_compat import Verdict, judge, offered_spec, version_schema
from syncflow.kube.schema_lcd import lowest_common, narrowed
from syncflow.modes.clusters.identity import NEGOTIATED_LABEL, SyncedType, endpoint
from syncflow.queue.errors import TransientError, describe
from syncflow.sync.endpoints import ClientCache
from syncflow.sync.reconciler import get_or_none
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.clusters")

Obj = dict[str, Any]
EXPORT = "syncflow-clusters"
APIS = "/apis/apis.kcp.io/v1alpha1"
SCHEMAS, EXPORTS, BINDINGS = f"{APIS}/apiresourceschemas", f"{APIS}/apiexports", f"{APIS}/apibindings"


def lowest_common_spec(offers: list[Obj]) -> Obj:
    """A one-version CRD spec every offer takes: the first offer's names, scope and storage version,
    the common schema of the offers that serve that version, the subresources and printer columns all
    of them have (so ``kubectl get`` in kcp shows the columns the clusters' CRDs declare)."""
    base = offers[0]
    version = storage_version(base["versions"])
    name = version["name"]
    same = [o for o in offers if o.get("scope") == base.get("scope") and version_schema(o, name) is not None]
    schemas = [schema for o in same if (schema := version_schema(o, name)) is not None]
    versions = [next(v for v in o["versions"] if v["name"] == name) for o in same]
    subresources = {
        sub: value
        for sub, value in (version.get("subresources") or {}).items()
        if all(sub in (v.get("subresources") or {}) for v in versions)
    }
    columns = [
        column
        for column in version.get("additionalPrinterColumns") or []
        if all(column in (v.get("additionalPrinterColumns") or []) for v in versions)
    ]
    entry: Obj = {
        "name": name,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": lowest_common(schemas)},
    }
    if subresources:
        entry["subresources"] = subresources
    if columns:
        entry["additionalPrinterColumns"] = columns
    return {"group": base["group"], "names": base["names"], "scope": base["scope"], "versions": [entry]}


def _has_objects(kcp: JsonApi, spec: Obj) -> bool:
    version = storage_version(spec["versions"])["name"]
    group = f"/apis/{spec['group']}" if spec["group"] else "/api"
    return bool(kcp.get(f"{group}/{version}/{spec['names']['plural']}", limit="1").get("items"))


def _schema_spec(spec: Obj) -> Obj:
    """A CRD spec as an APIResourceSchema spec (a version's schema is the OpenAPI schema itself)."""
    versions = [
        {**v, "schema": (v.get("schema") or {}).get("openAPIV3Schema") or {}} for v in spec["versions"]
    ]
    return {**spec, "versions": versions}


def _crd_spec(schema_spec: Obj) -> Obj:
    """The inverse of ``_schema_spec``."""
    versions = [{**v, "schema": {"openAPIV3Schema": v.get("schema") or {}}} for v in schema_spec["versions"]]
    return {**schema_spec, "versions": versions}


def schema_name(spec: Obj, t: SyncedType) -> str:
    """``v<hash>.<plural>.<group>`` (``.core`` for the core group): a new name for every new content,
    since APIResourceSchemas are immutable."""
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:8]
    return f"v{digest}.{t.plural}.{t.group or 'core'}"


def _of_type(name: str, t: SyncedType) -> bool:
    return name.split(".", 1)[-1] == f"{t.plural}.{t.group or 'core'}"


def pulled_spec(kcp: JsonApi, t: SyncedType) -> Obj | None:
    """The spec the puller exported for ``t`` in this workspace (CRD shape), if any."""
    export = get_or_none(kcp, f"{EXPORTS}/{EXPORT}") or {}
    for name in (export.get("spec") or {}).get("latestResourceSchemas") or []:
        if _of_type(name, t):
            schema = get_or_none(kcp, f"{SCHEMAS}/{name}")
            return _crd_spec(schema["spec"]) if schema is not None else None
    return None


def _export(kcp: JsonApi, t: SyncedType, spec: Obj, clusters: list[str]) -> Obj:
    """Serve ``spec`` in the workspace: an APIResourceSchema in the puller's APIExport, bound here (a CRD
    cannot claim a built-in group such as ``apps``; an export can)."""
    name = schema_name(spec, t)
    schema = {
        "apiVersion": "apis.kcp.io/v1alpha1",
        "kind": "APIResourceSchema",
        "metadata": {"name": name, "annotations": {f"{NEGOTIATED_LABEL}-from": ",".join(clusters)}},
        "spec": _schema_spec(spec),
    }
    try:
        kcp.create(SCHEMAS, schema)
    except ApiException as exc:
        if exc.status != 409:  # the same content was exported before: same name, same schema
            raise
    export = get_or_none(kcp, f"{EXPORTS}/{EXPORT}")
    latest = [
        n for n in ((export or {}).get("spec") or {}).get("latestResourceSchemas") or [] if not _of_type(n, t)
    ]
    if export is None:
        body = {
            "metadata": {"name": EXPORT, "labels": {NEGOTIATED_LABEL: "true"}},
            "spec": {"latestResourceSchemas": [name]},
        }
        kcp.create(EXPORTS, body)
    else:
        patch = {
            "metadata": {"resourceVersion": export["metadata"]["resourceVersion"]},
            "spec": {"latestResourceSchemas": [*latest, name]},
        }
        kcp.merge_patch(f"{EXPORTS}/{EXPORT}", patch)
    if get_or_none(kcp, f"{BINDINGS}/{EXPORT}") is None:
        _, path = cluster_identity(kcp)
        binding = {
            "metadata": {"name": EXPORT},
            "spec": {"reference": {"export": {"path": path, "name": EXPORT}}},
        }
        kcp.create(BINDINGS, binding)
    log_event(
        logger, "clusters.type_exported", resource=t.group_resource, schema=name, clusters=",".join(clusters)
    )
    return spec


def change(stored: Obj, common: Obj, everyone: bool, empty: Callable[[], bool]) -> str | None:
    """Whether kcp's ``stored`` schema becomes the clusters' ``common`` one: ``"widen"`` when it takes
    more and the offers are ``everyone``'s (a cluster that is away may take less), ``"narrow"`` when it
    takes less and kcp holds no object of the type (``empty``: narrowing prunes stored fields), else
    None."""
    wider, narrower = narrowed(common, stored), narrowed(stored, common)
    if wider and not narrower:
        return "widen" if everyone else None
    if narrower and empty():
        return "narrow"
    return None


def _renegotiated(
    kcp: JsonApi, t: SyncedType, spec: Obj, offers: list[Obj], clusters: list[str], everyone: bool
) -> Obj:
    """What the puller exported, changed to the offers' common schema when ``change`` says so."""
    common = lowest_common_spec(offers)
    version = storage_version(common["versions"])["name"]
    stored, wanted = version_schema(spec, version), version_schema(common, version)
    if stored is None or wanted is None:
        return spec
    how = change(stored, wanted, everyone, lambda: not _has_objects(kcp, spec))
    if how is None:
        return spec
    log_event(logger, "clusters.type_renegotiated", resource=t.group_resource, change=how)
    return _export(kcp, t, common, clusters)


def negotiate(
    kcp: JsonApi, t: SyncedType, offers: dict[str, Obj | None], everyone: bool = True
) -> dict[str, Verdict]:
    """Make kcp serve ``t`` with a schema the offering clusters take; the verdict of each cluster.
    ``everyone``: the offers are those of every Cluster (none is away), so kcp's schema may widen."""
    served = {name: spec for name, spec in offers.items() if spec is not None}
    names = sorted(served)
    pulled = pulled_spec(kcp, t)
    if pulled is not None:
        offered = [served[n] for n in names]
        wanted = _renegotiated(kcp, t, pulled, offered, names, everyone) if served else pulled
    else:
        native = offered_spec(kcp, t.group, t.plural)
        if native is not None:
            wanted = native
        elif served:
            wanted = _export(kcp, t, lowest_common_spec([served[n] for n in names]), names)
        else:
            return {
                name: Verdict("Pending", f"no Ready cluster serves {t.group_resource}") for name in offers
            }
    return {name: judge(wanted, offers[name], t.group_resource) for name in offers}


def record(kcp: JsonApi, cluster: str, t: SyncedType, verdict: Verdict) -> bool:
    """Write one type's verdict into a Cluster's ``status.syncedResources`` (the cluster controller drops
    the entries of types no longer synced); False when it was there already."""
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
        mine = (entry["group"], entry["resource"])
        new = [entry if (e.get("group", ""), e["resource"]) == mine else e for e in old]
        new += [] if t.entry(old) else [entry]
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


def withdraw(kcp: JsonApi, t: SyncedType) -> bool:
    """Stop serving the type the puller exported for ``t`` (no Cluster is left to take it) — only while
    kcp holds no object of it, which withdrawing would hide; True when withdrawn."""
    spec = pulled_spec(kcp, t)
    export = get_or_none(kcp, f"{EXPORTS}/{EXPORT}")
    if spec is None or export is None:
        return False
    if _has_objects(kcp, spec):
        log_event(logger, "clusters.type_kept", resource=t.group_resource, reason="kcp holds objects of it")
        return False
    names = (export.get("spec") or {}).get("latestResourceSchemas") or []
    patch = {
        "metadata": {"resourceVersion": export["metadata"]["resourceVersion"]},
        "spec": {"latestResourceSchemas": [n for n in names if not _of_type(n, t)]},
    }
    kcp.merge_patch(f"{EXPORTS}/{EXPORT}", patch)
    log_event(logger, "clusters.type_withdrawn", resource=t.group_resource)
    return True


def pull(kcp: JsonApi, clusters_cache: ClientCache, t: SyncedType) -> None:
    """Negotiate ``t`` over the Ready clusters and record each one's verdict (one that fails to
    answer now is left as it was: its next probe says whether it is still Ready); with no Cluster
    left, withdraw the type the puller exported."""
    offers: dict[str, Obj | None] = {}
    clusters = [
        obj for obj in kcp.get(PATH).get("items") or [] if not obj["metadata"].get("deletionTimestamp")
    ]
    if not clusters:
        withdraw(kcp, t)
        return
    for obj in clusters:
        name = obj["metadata"]["name"]
        if not is_true((obj.get("status") or {}).get("conditions"), "Ready"):
            continue
        try:
            offers[name] = offered_spec(clusters_cache.get(endpoint(name), fresh=True), t.group, t.plural)
        except Exception as exc:  # one cluster that cannot answer must not hold up the others
            log_event(
                logger,
                "clusters.offer_failed",
                level=logging.WARNING,
                cluster=name,
                resource=t.group_resource,
                error=f"{type(exc).__name__}: {describe(exc)}"[:512],
            )
    for name, verdict in negotiate(kcp, t, offers, everyone=len(offers) == len(clusters)).items():
        record(kcp, name, t, verdict)
