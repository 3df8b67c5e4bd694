"""The local copy of a kcp object as syncflow wants it, with api-syncagent's sync metadata.

Pure functions over plain JSON-like dicts; the sync task does the I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from syncflow.sync import metadata as md
from syncflow.sync.naming import sha1_hex
from syncflow.util.jsonvalues import deep_copy

_STRIPPED_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)


def remote_labels(cluster: str, namespace: str, name: str, agent: str) -> dict[str, str]:
    """The sync labels on a local copy; the namespace hash only for namespaced kcp objects."""
    labels = {
        md.AGENT_LABEL: agent,
        md.REMOTE_CLUSTER_LABEL: cluster,
        md.REMOTE_NAME_HASH_LABEL: sha1_hex(name),
    }
    if namespace:
        labels[md.REMOTE_NAMESPACE_HASH_LABEL] = sha1_hex(namespace)
    return labels


def remote_annotations(namespace: str, name: str, workspace_path: str | None) -> dict[str, str]:
    """The sync annotations on a local copy: the kcp object's full name, namespace and workspace path."""
    annotations = {md.REMOTE_NAME_ANNOTATION: name}
    if namespace:
        annotations[md.REMOTE_NAMESPACE_ANNOTATION] = namespace
    if workspace_path:
        annotations[md.REMOTE_WORKSPACE_PATH_ANNOTATION] = workspace_path
    return annotations


def copy_labels(cluster: str, namespace: str, name: str) -> dict[str, str]:
    """The labels that make a local object the copy of kcp object ``namespace/name`` in ``cluster``
    (any agent's)."""
    labels = remote_labels(cluster, namespace, name, agent="")
    del labels[md.AGENT_LABEL]
    return labels


def copy_selector(cluster: str, namespace: str, name: str) -> str:
    """The label selector that finds the local copy of kcp object ``namespace/name`` in ``cluster``."""
    return ",".join(f"{key}={value}" for key, value in sorted(copy_labels(cluster, namespace, name).items()))


def is_copy_of(obj: Mapping[str, Any], cluster: str, namespace: str, name: str) -> bool:
    """Whether local object ``obj`` is what :func:`copy_selector` selects."""
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in copy_labels(cluster, namespace, name).items())


def strip(obj: Mapping[str, Any], *, drop: Collection[str] = ()) -> dict[str, Any]:
    """A deep copy without server-owned metadata and without the top-level keys in ``drop``."""
    out = {key: deep_copy(value) for key, value in obj.items() if key not in drop}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in _STRIPPED_METADATA:
            meta.pop(key, None)
    return out


def user_labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    """Labels copied from kcp: all but the sync labels and kcp's ``claimed.internal.apis.kcp.io/*``."""
    return {
        key: value
        for key, value in (labels or {}).items()
        if key not in md.SYNC_LABELS and not key.startswith(md.CLAIMED_LABEL_PREFIX)
    }


def user_annotations(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """Annotations copied from kcp: all but the sync ones, kcp's and kubectl's, and related-object refs."""
    excluded = md.SYNC_ANNOTATIONS | {md.KCP_CLUSTER_ANNOTATION, md.LAST_APPLIED_ANNOTATION}
    return {
        key: value
        for key, value in (annotations or {}).items()
        if key not in excluded and not key.startswith(md.RELATED_RESOURCES_ANNOTATION_PREFIX)
    }


def _user_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """name, namespace and the copyable labels/annotations; empty values left out."""
    out: dict[str, Any] = {key: meta[key] for key in ("name", "namespace") if meta.get(key)}
    if labels := user_labels(meta.get("labels")):
        out["labels"] = labels
    if annotations := user_annotations(meta.get("annotations")):
        out["annotations"] = annotations
    return out


def build_desired(
    kcp_obj: Mapping[str, Any],
    *,
    local_api_version: str,
    local_kind: str,
    local_namespace: str,
    local_name: str,
    cluster: str,
    workspace_path: str | None,
    agent: str,
    keep_status: bool = False,
) -> dict[str, Any]:
    """The local copy of (already spec-mutated) ``kcp_obj``: local GVK and name, sync metadata, no status
    (unless ``keep_status``: a type without a status subresource carries it in the object).

    ``local_namespace`` is "" for a cluster-scoped local resource. Metadata keeps only name, namespace,
    labels and annotations; other top-level keys (spec, data, ...) are deep-copied.
    """
    out = strip(kcp_obj, drop=() if keep_status else (md.STATUS,))
    kcp_meta = kcp_obj.get("metadata") or {}
    kcp_ns, kcp_name = str(kcp_meta.get("namespace") or ""), str(kcp_meta.get("name") or "")
    meta = _user_metadata(kcp_meta)
    meta["name"] = local_name
    meta.pop("namespace", None)
    if local_namespace:
        meta["namespace"] = local_namespace
    meta["labels"] = {**meta.get("labels", {}), **remote_labels(cluster, kcp_ns, kcp_name, agent)}
    meta["annotations"] = {
        **meta.get("annotations", {}),
        **remote_annotations(kcp_ns, kcp_name, workspace_path),
    }
    out.update(apiVersion=local_api_version, kind=local_kind, metadata=meta)
    return out


def preview(
    obj: Mapping[str, Any], *, api_version: str, kind: str, namespace: str, name: str
) -> dict[str, Any]:
    """What a copy of ``obj`` would look like before it exists (api-syncagent's in-memory destination
    object, which spec mutations may read): a deep copy with the target GVK, namespace and name."""
    out = deep_copy(dict(obj))
    meta = out.setdefault("metadata", {})
    meta["name"] = name
    meta.pop("namespace", None)
    if namespace:
        meta["namespace"] = namespace
    out.update(apiVersion=api_version, kind=kind)
    return out


def managed_content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the state store records and the merge compares (api-syncagent's last-known state).

    The stripped object without subresources (status, scale); metadata reduced to name, namespace and
    the labels/annotations that are copied (sync keys and excluded keys removed). Record it for the
    spec-mutated *kcp* object, as api-syncagent does; encode it with :func:`syncflow.sync.state.go_json`.
    """
    out = strip(obj, drop=md.SUBRESOURCE_KEYS)
    out["metadata"] = _user_metadata(obj.get("metadata") or {})
    return out
