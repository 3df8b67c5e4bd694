"""Sync latency quantiles from the agent's metrics endpoints: the ``syncflow_sync_latency_seconds``
histogram summed over every endpoint and direction, for the agent and for each rule, with Prometheus'
``histogram_quantile`` interpolation."""

from __future__ import annotations

import math
import urllib.request
from collections import defaultdict
from collections.abc import Sequence

from prometheus_client.parser import text_string_to_metric_families

from syncflow.console.models import Latency, RuleLatency
from syncflow.util.neterrors import network_reason

METRIC = "syncflow_sync_latency_seconds"
SCRAPE_TIMEOUT = 2.0
MAX_RULES = 200
"""Rules whose latency an answer carries (those with the most samples): as many as the overview counts."""

Buckets = dict[float, float]
"""Cumulative bucket counts of a histogram: upper bound → count."""


def scrape(url: str, timeout: float = SCRAPE_TIMEOUT) -> dict[str, Buckets]:
    """The latency histogram's cumulative bucket counts at one endpoint, by rule (directions summed)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode("utf-8", "replace")
    rules: dict[str, Buckets] = defaultdict(lambda: defaultdict(float))
    for family in text_string_to_metric_families(text):
        if family.name != METRIC:
            continue
        for sample in family.samples:
            if sample.name == f"{METRIC}_bucket":
                rules[sample.labels.get("rule", "")][float(sample.labels["le"])] += sample.value
    return rules


def quantile(q: float, buckets: Buckets) -> float | None:
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


def _samples(buckets: Buckets) -> int:
    return int(buckets[max(buckets)]) if buckets else 0


def latency(urls: Sequence[str], timeout: float = SCRAPE_TIMEOUT) -> Latency:
    """p50 and p99 over every endpoint that answers, for the agent and for each rule (the
    ``MAX_RULES`` with the most samples); unknown when no endpoint answers."""
    if not urls:
        return Latency(error="no metrics endpoint configured (--metrics-url)")
    merged: Buckets = defaultdict(float)
    by_rule: dict[str, Buckets] = defaultdict(lambda: defaultdict(float))
    answered, errors = [], []
    for url in urls:
        try:
            rules = scrape(url, timeout)
        except Exception as exc:  # an endpoint down is shown, never a failed page
            errors.append(f"{url}: {network_reason(exc)}")
            continue
        answered.append(url)
        for rule, buckets in rules.items():
            for bound, count in buckets.items():
                merged[bound] += count
                by_rule[rule][bound] += count
    if not answered:
        return Latency(error="; ".join(errors))
    busiest = sorted(by_rule.items(), key=lambda item: (-_samples(item[1]), item[0]))[:MAX_RULES]
    return Latency(
        p50=quantile(0.5, merged),
        p99=quantile(0.99, merged),
        samples=_samples(merged),
        sources=answered,
        error="; ".join(errors),
        rules=[
            RuleLatency(name=rule, p50=quantile(0.5, b), p99=quantile(0.99, b), samples=_samples(b))
            for rule, b in sorted(busiest)
        ],
    )
