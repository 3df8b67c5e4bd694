"""Reads the table ``kubectl api-resources -o wide`` prints (columns found by the header's offsets)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KUBE_132_LISTING = Path(__file__).with_name("kube-1.32-api-resources.txt")
"""``kubectl api-resources -o wide`` of a Kubernetes 1.32 cluster with its default API groups."""

COLUMNS = ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES")


@dataclass(frozen=True)
class Row:
    """One resource as kubectl lists it."""

    name: str
    short_names: tuple[str, ...]
    api_version: str
    namespaced: bool
    kind: str
    verbs: tuple[str, ...]
    categories: tuple[str, ...]

    @property
    def group(self) -> str:
        """The API group ("" for core)."""
        return self.api_version.rpartition("/")[0]


def _split(cell: str) -> tuple[str, ...]:
    cell = cell.strip("[]")  # older kubectl prints verbs as "[create delete]"
    return tuple(part for part in cell.replace(" ", ",").split(",") if part)


def parse(text: str) -> list[Row]:
    """The rows of a listing; the header must have every column of ``-o wide``."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [header.index(column) for column in COLUMNS]
    rows = []
    for line in lines[1:]:
        cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
        name, short, api_version, namespaced, kind, verbs, categories = cells
        rows.append(
            Row(
                name,
                _split(short),
                api_version,
                namespaced == "true",
                kind,
                _split(verbs),
                _split(categories),
            )
        )
    return rows
