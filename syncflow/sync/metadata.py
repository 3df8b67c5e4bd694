"""The metadata keys syncflow shares with kcp's api-syncagent, so a cluster can switch agents."""

from __future__ import annotations

AGENT_LABEL = "syncagent.kcp.io/agent-name"
REMOTE_CLUSTER_LABEL = "syncagent.kcp.io/remote-object-cluster"
REMOTE_NAME_HASH_LABEL = "syncagent.kcp.io/remote-object-name-hash"
REMOTE_NAMESPACE_HASH_LABEL = "syncagent.kcp.io/remote-object-namespace-hash"
REMOTE_NAME_ANNOTATION = "syncagent.kcp.io/remote-object-name"
REMOTE_NAMESPACE_ANNOTATION = "syncagent.kcp.io/remote-object-namespace"
REMOTE_WORKSPACE_PATH_ANNOTATION = "syncagent.kcp.io/remote-object-workspace-path"
CLEANUP_FINALIZER = "syncagent.kcp.io/cleanup"
STATE_SECRET_LABEL = "syncagent.kcp.io/object-state"
KEEP_ANNOTATION = "syncflow.kcp.io/keep"
"""On a copy whose source object a rule's ``keep`` selects: never deleted with or after its source."""

SYNC_LABELS = frozenset(
    {AGENT_LABEL, REMOTE_CLUSTER_LABEL, REMOTE_NAME_HASH_LABEL, REMOTE_NAMESPACE_HASH_LABEL}
)
SYNC_ANNOTATIONS = frozenset(
    {REMOTE_NAME_ANNOTATION, REMOTE_NAMESPACE_ANNOTATION, REMOTE_WORKSPACE_PATH_ANNOTATION}
)

# Never copied from kcp to the local copy (besides the sync keys above).
CLAIMED_LABEL_PREFIX = "claimed.internal.apis.kcp.io/"
KCP_CLUSTER_ANNOTATION = "kcp.io/cluster"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
RELATED_RESOURCES_ANNOTATION_PREFIX = "related-resources.syncagent.kcp.io/"

STATUS = "status"
SUBRESOURCE_KEYS = ("status", "scale")
"""Top-level keys api-syncagent treats as subresources: never in the state store, never patched."""
