"""devcluster: a small, faithful Kubernetes-compatible API server for local runs, demos and tests.

It is a separate package: the syncflow engine never imports it and talks to it over HTTP only,
exactly as it talks to a real kube-apiserver or kcp. See ``docs/devcluster.md``.
"""
