"""kcp mode of devcluster: workspaces, APIExports, APIBindings and the APIExport virtual workspace.

Behaviour follows kcp v0.29 to v0.32 where sync agents rely on it; see docs/devcluster.md for the
differences.
"""
