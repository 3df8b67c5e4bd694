"""The keyed work queue (docs/architecture.md §5): Redis Lua scripts are the source of truth, a Celery message
only carries an object key.

``workqueue`` is one queue's script interface, ``service`` all queues of an agent plus publishing,
``execute`` one task run (claim → handler → done), ``errors`` the outcome classification,
``budget`` the shared request budget, ``report`` the operator views.
"""
