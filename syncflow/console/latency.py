"""Sync latency quantiles from the agent's metrics endpoints: the ``syncflow_sync_latency_seconds``
histogram summed over every endpoint, rule and direction, with Prometheus' ``histogram_quantile``
interpolation."""

from __future__ import annotations

import math
import urllib.request
from collections import defaultdict
from collections.abc import Sequence

from prometheus_client.parser import text_string_to_metric_families

from syncflow.console.models import Latency
from syncflow.util.neterrors import network_reason

METRIC = "syncflow_sync_latency_seconds"
SCRAPE_TIMEOUT = 2.0


def scrape(url: str, timeout: float = SCRAPE_TIMEOUT) -> dict[float, float]:
    """Cumulative bucket counts (upper bound → count) of the latency histogram at one endpoint."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode("utf-8", "replace")
    buckets: dict[float, float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        if family.name != METRIC:
            continue
        for sample in family.samples:
            if sample.name == f"{METRIC}_bucket":
                buckets[float(sample.labels["le"])] += sample.value
    return buckets


def quantile(q: float, buckets: dict[float, float]) -> float | None:
    """The ``q`` quantile of cumulative buckets (None: no observations)."""
    bounds = sorted(buckets)
    if not bounds or buckets[bounds[-1]] <= 0:
        return None
    total = buckets[bounds[-1]]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = bound, count
    return bounds[-1]


def latency(urls: Sequence[str], timeout: float = SCRAPE_TIMEOUT) -> Latency:
    """p50 and p99 over every endpoint that answers; unknown when none does."""
    if not urls:
        return Latency(error="no metrics endpoint configured (--metrics-url)")
    merged: dict[float, float] = defaultdict(float)
    answered, errors = [], []
    for url in urls:
        try:
            buckets = scrape(url, timeout)
        except Exception as exc:  # an endpoint down is shown, never a failed page
            errors.append(f"{url}: {network_reason(exc)}")
            continue
        answered.append(url)
        for bound, count in buckets.items():
            merged[bound] += count
    if not answered:
        return Latency(error="; ".join(errors))
    total = merged[max(merged)] if merged else 0
    return Latency(
        p50=quantile(0.5, merged),
        p99=quantile(0.99, merged),
        samples=int(total),
        sources=answered,
        error="; ".join(errors),
    )
