"""syncflow: keeps Kubernetes objects in sync between kcp workspaces and service clusters.

Sync work runs as keyed, idempotent Celery tasks over Redis; see docs/architecture.md.
"""

__version__ = "0.1.0"
