"""Regenerate ``kube-1.24.json`` from kcp's ``config/rootcompute`` (kcp v0.11.0).

Usage: ``python -m syncflow.devcluster.kcp.compute.generate <kcp>/config/rootcompute > kube-1.24.json``
where ``<kcp>`` is a checkout of kcp-dev/kcp at v0.11.0 (e.g. ``git archive v0.11.0 config/rootcompute``).
The Workspace and every object of ``kube-1.24/`` are kept as kcp ships them, except that the
APIResourceSchemas lose their ``description`` texts (four fifths of their size).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

SOURCE = "kcp-dev/kcp v0.11.0 config/rootcompute (APIResourceSchema descriptions removed)"
_KINDS_ORDER = ("APIResourceSchema", "APIExport", "ClusterRole", "ClusterRoleBinding")


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):  # a "description" text, never a property of that name (an object)
        return {
            k: _without_descriptions(v)
            for k, v in node.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def generate(rootcompute: Path) -> dict[str, Any]:
    """The data file's content: the ``compute`` Workspace and what kcp creates inside it."""
    (workspace,) = _documents(rootcompute / "clusterworkspace-compute.yaml")
    objects = [d for f in sorted((rootcompute / "kube-1.24").glob("*.yaml")) for d in _documents(f)]
    objects.sort(key=lambda o: (_KINDS_ORDER.index(o["kind"]), o["metadata"]["name"]))
    return {
        "source": SOURCE,
        "workspace": workspace,
        "objects": [_without_descriptions(o) if o["kind"] == "APIResourceSchema" else o for o in objects],
    }


def render(data: dict[str, Any]) -> str:
    """Compact JSON with one object per line."""
    compact = {k: json.dumps(v, separators=(",", ":")) for k, v in data.items() if k != "objects"}
    lines = [f'"{k}":{v},' for k, v in compact.items()]
    objects = ",\n".join(json.dumps(o, separators=(",", ":")) for o in data["objects"])
    return "{\n" + "\n".join(lines) + '\n"objects":[\n' + objects + "\n]}\n"


def main() -> None:
    """Print the data file for the ``config/rootcompute`` directory given as the only argument."""
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.stdout.write(render(generate(Path(sys.argv[1]))))


if __name__ == "__main__":
    main()
