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
