"""Whether a cluster takes a type as kcp serves it (kcp's type negotiation, shared by the modes that sync
to physical clusters): the cluster's offer of the type — its CRD's spec, or one synthesised from
discovery and OpenAPI for a built-in type — judged against kcp's schema: ``Accepted`` when it takes
every value kcp's takes, otherwise ``Incompatible`` naming the fields it lacks, so nothing is sent that
a cluster would prune or refuse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from syncflow.kube.crds import storage_version
from syncflow.kube.jsonapi import JsonApi
from syncflow.kube.schema_lcd import narrowed
from syncflow.kube.schemas import CRD_PATH, builtin_spec

Obj = dict[str, Any]
SHOWN_FIELDS = 5
"""Fields a verdict names (then "and N more")."""


@dataclass(frozen=True)
class Verdict:
    """Whether one cluster takes kcp's schema of a type."""

    state: str
    message: str
    version: str = ""


def version_schema(spec: Obj, version: str) -> Obj | None:
    """The OpenAPI schema of a served ``version`` of a CRD spec (None: not served)."""
    for entry in spec.get("versions") or []:
        if entry.get("name") == version and entry.get("served", True):
            schema: Obj = (entry.get("schema") or {}).get("openAPIV3Schema") or {}
            return schema
    return None


def served_kind(api: JsonApi, group: str, plural: str) -> str | None:
    """The kind ``api`` serves ``plural.group`` as, from its preferred version's discovery (None: not
    served)."""
    try:
        if group:
            version = (api.get(f"/apis/{group}").get("preferredVersion") or {}).get("version")
            listing = api.get(f"/apis/{group}/{version}") if version else {}
        else:
            listing = api.get("/api/v1")
    except ApiException as exc:
        if exc.status in (404, 503):
            return None
        raise
    return next((r["kind"] for r in listing.get("resources") or [] if r.get("name") == plural), None)


def crd_spec(api: JsonApi, group: str, plural: str) -> Obj | None:
    """The spec of ``api``'s CRD of ``plural.group`` (None: no CRD serves it, or it is being deleted)."""
    if not group:
        return None
    try:
        crd = api.get(f"{CRD_PATH}/{plural}.{group}")
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    if crd["metadata"].get("deletionTimestamp"):
        return None
    spec: Obj = crd["spec"]
    return spec


def offered_spec(api: JsonApi, group: str, plural: str) -> Obj | None:
    """A cluster's CRD spec of ``plural.group``: its CRD's, or synthesised for a built-in type (None: not
    served)."""
    spec = crd_spec(api, group, plural)
    if spec is not None:
        return spec
    kind = served_kind(api, group, plural)
    return builtin_spec(api, group, kind) if kind else None


def judge(wanted: Obj, offered: Obj | None, what: str) -> Verdict:
    """Whether a cluster's offer of type ``what`` takes every value kcp's spec ``wanted`` takes."""
    version = storage_version(wanted["versions"])["name"]
    if offered is None:
        return Verdict("Incompatible", f"the cluster does not serve {what}", version)
    if offered.get("scope") != wanted.get("scope"):
        return Verdict(
            "Incompatible",
            f"{what} is {offered.get('scope')}-scoped in the cluster, not {wanted.get('scope')}",
            version,
        )
    mine = version_schema(offered, version)
    if mine is None:
        return Verdict("Incompatible", f"the cluster does not serve {what} {version}", version)
    lost = narrowed(version_schema(wanted, version) or {}, mine)
    if lost:
        more = f" and {len(lost) - SHOWN_FIELDS} more" if len(lost) > SHOWN_FIELDS else ""
        shown = ", ".join(lost[:SHOWN_FIELDS])
        return Verdict(
            "Incompatible", f"the cluster's {what} {version} takes less than kcp's: {shown}{more}", version
        )
    return Verdict("Accepted", f"{what} {version}: the cluster takes kcp's schema", version)
