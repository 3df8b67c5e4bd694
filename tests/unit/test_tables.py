"""Ages in Table cells, as kube's table convertors print them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from syncflow.devcluster.tables import human_age

NOW = datetime(2026, 1, 1, 0, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("timestamp", "shown"),
    [
        ("2026-01-01T00:09:15Z", "45s"),
        ("2026-01-01T00:09:15.999999Z", "44s"),  # fractional seconds, as status timestamps carry them
        ("2026-01-01T01:09:15+01:00", "45s"),
        ("2026-01-01T00:06:48Z", "3m12s"),
        (None, "<unknown>"),
        ("last tuesday", "<invalid>"),
    ],
)
def test_human_age(timestamp: str | None, shown: str) -> None:
    assert human_age(timestamp, NOW) == shown
