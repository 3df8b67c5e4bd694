"""Ages in Table cells, as kube's table convertors print them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from syncflow.devcluster.printers import human_age, human_duration

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


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-1.5, "0s"),
        (-3, "<invalid>"),
        (119, "119s"),
        (540, "9m"),
        (9 * 60 + 59, "9m59s"),
        (179 * 60 + 59, "179m"),
        (5 * 3600 + 30 * 60, "5h30m"),
        (7 * 3600, "7h"),
        (47 * 3600, "47h"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (400 * 86400, "400d"),
        (3 * 365 * 86400 + 30 * 86400, "3y30d"),
        (9 * 365 * 86400 + 30 * 86400, "9y"),
    ],
)
def test_human_duration_matches_kubes(seconds: float, shown: str) -> None:
    assert human_duration(seconds) == shown
