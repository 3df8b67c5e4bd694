"""Reading a process's ``/metrics`` in tests, with prometheus-client's own text parser."""

from __future__ import annotations

import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    """Every sample of ``http://127.0.0.1:<port>/metrics`` (empty while nothing answers)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except (urllib.error.URLError, OSError):
        return {}
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, /, **labels: str) -> float | None:
    """The sample of ``name`` with exactly ``labels``, or None."""
    return samples.get((name, frozenset(labels.items())))


def total(samples: Samples, name: str, /, **labels: str) -> float:
    """The sum of every sample of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= found)
