"""The metrics syncflow records. Names follow kcp's TMC syncer (``syncer_*``), api-syncagent
(``sync_agent_*``), client-go and controller-runtime (``workqueue_*``, ``rest_client_*``,
``leader_election_*``, with their help texts) and syncflow's own (``syncflow_*``). Labels are
bounded: a resource is a rule's group-resource, never an object's name; a work queue's ``name`` is
one of the keyed queues; a host is an API server's ``host:port``.

Importing this module creates the metrics: import it only after ``multiprocess.prepare`` (workers),
which ``record`` does by importing it on first use.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Seconds; the last bucket is the default task time limit."""
WORKQUEUE_BUCKETS = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
"""Seconds: the bounds of controller-runtime's workqueue buckets from a millisecond up (the queue
measures time in milliseconds), so queries on its ``le`` values work alike."""

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""Seconds, around the targets an operator watches: a copy within 200 ms, a status within 500 ms."""

SYNC_LATENCY = Histogram(
    "syncflow_sync_latency_seconds",
    "Seconds from the moment a watch queued an object's key to the answer of the write that synced it, "
    "by mode, rule and direction (spec: copy created or updated, status: status returned or carried, "
    "delete: copy deleted, upsync).",
    ["mode", "rule", "direction"],
    buckets=LATENCY_BUCKETS,
)
RESOURCES_SYNCED = Counter(
    "syncer_resources_synced",
    "Writes the engine made to sync objects, by the rule's group-resource and direction "
    "(spec: copy created or updated, status: status returned or carried, delete: copy deleted).",
    ["resource", "direction"],
)
SYNC_DURATION = Histogram(
    "syncer_sync_duration_seconds",
    "Duration of keyed sync and status task bodies, by the rule's group-resource.",
    ["resource"],
    buckets=DURATION_BUCKETS,
)
SYNC_ERRORS = Counter(
    "syncer_sync_errors",
    "Failed sync and status task bodies, by the rule's group-resource and kind "
    "(transient: retried with backoff, permanent: parked, error: unclassified).",
    ["resource", "kind"],
)
HEARTBEATS = Counter(
    "syncer_heartbeat",
    "Workload mode heartbeats to the SyncTarget (ok, unreachable: sent while the physical cluster "
    "does not answer, failed: not written to kcp).",
    ["result"],
)
CONNECTION_STATUS = Gauge(
    "syncer_connection_status",
    "1 when the last request or watch connection to the endpoint got an answer, else 0.",
    ["endpoint"],
    multiprocess_mode="livemostrecent",
)
TASKS = Counter(
    "syncflow_queue_tasks",
    "Celery task runs by task name and outcome (keyed tasks: ok, after, transient, error, permanent, "
    "busy, stale, invalid-key; other tasks: ok, error).",
    ["task", "outcome"],
)
RULE_READY = Gauge(
    "syncflow_sync_rule_ready",
    "Per sync rule of the leading watcher (publish mode: per PublishedResource): 1 ready, 0 pending.",
    ["rule"],
    multiprocess_mode="livemostrecent",
)
PUBLISHED_RESOURCES = Gauge(
    "sync_agent_published_resource",
    "Number of PublishedResources currently managed by this syncagent instance (api-syncagent's gauge).",
    multiprocess_mode="livemostrecent",
)
WORKQUEUE_ADDS = Counter(
    "workqueue_adds",
    "Total number of adds handled by workqueue",
    ["name"],
)
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    ["name"],
    buckets=WORKQUEUE_BUCKETS,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes.",
    ["name"],
    buckets=WORKQUEUE_BUCKETS,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries",
    "Total number of retries handled by workqueue",
    ["name"],
)
REST_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
)
LEADER = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
    "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ["name"],
    multiprocess_mode="livemostrecent",
)
