"""Prometheus metrics of every syncflow process (``--metrics-address``, docs/operations.md).

``record`` is what the engine and the modes call; ``instruments`` defines the metrics (imported on
first use, so a worker can choose prometheus-client's multiprocess mode before any metric exists);
``queue`` reads the work queue's gauges from Redis at scrape time; ``exposition`` serves ``/metrics``
with every series labelled by agent; ``multiprocess`` keeps the per-process files of prefork
children and all-in-one roles; ``celery`` counts task outcomes and retires dead children.
"""
