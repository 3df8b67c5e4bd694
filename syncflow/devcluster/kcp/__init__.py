"""kcp mode of devcluster: workspaces, APIExports, APIBindings and the APIExport virtual workspace.

Behaviour follows kcp v0.29 to v0.32 where sync agents rely on it, and kcp v0.11 for what the TMC
workload syncer needs (root:compute's ``kubernetes`` export, SyncTargets and their heartbeat
conditions); see docs/devcluster.md for the differences.
"""
