"""Local copies as syncflow marks them, for tests that list or read copies without a running agent."""

from __future__ import annotations

from typing import Any


def copy_of(name: str) -> dict[str, Any]:
    """The copy (``ns/copy-<name>``) of kcp object ``default/<name>`` in logical cluster ``ws1``."""
    return {
        "metadata": {
            "name": f"copy-{name}",
            "namespace": "ns",
            "labels": {"syncagent.kcp.io/remote-object-cluster": "ws1"},
            "annotations": {
                "syncagent.kcp.io/remote-object-name": name,
                "syncagent.kcp.io/remote-object-namespace": "default",
            },
        }
    }
