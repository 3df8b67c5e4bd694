"""Foreign objects of a soak: objects on the target that syncflow did not create and must never touch.

Each is created with content, labels and annotations of its own and no sync labels, and fingerprinted
then (content, labels, annotations, resourceVersion). Some hold the place a source's copy would land in;
in a mode that documents adoption (publish, docs/ownership.md) those become that source's copy, and are
checked as copies instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.soaktargets import SoakTarget, SourceRef

LOCAL_FIELD = "localNote"
"""The content field only the target sets: a copy's local edit, or a foreign object's own."""
ANY_STATUS = tuple(range(300, 600))


def fingerprint(obj: dict[str, Any], content: str) -> dict[str, Any]:
    """What must not change on a foreign object."""
    meta = obj.get("metadata") or {}
    return {
        content: obj.get(content),
        "labels": meta.get("labels"),
        "annotations": meta.get("annotations"),
        "resourceVersion": meta.get("resourceVersion"),
    }


@dataclass
class Foreign:
    """One foreign object on the target."""

    place: str
    """namespace/name"""
    path: str
    before: dict[str, Any]
    claims: SourceRef | None
    """The source whose copy's place it holds."""
    note: str
    """Its own value of ``LOCAL_FIELD``."""


@dataclass
class Verdict:
    """The foreign objects as found now."""

    untouched: int = 0
    changed: int = 0
    deleted: int = 0
    adopted: int = 0
    adoptable: int = 0


class ForeignObjects:
    """The foreign objects a soak planted on its target."""

    def __init__(self, target: SoakTarget) -> None:
        self.target = target
        self.items: list[Foreign] = []

    def adopted(self, item: Foreign) -> bool:
        """Whether the mode takes this one over as its claimed source's copy."""
        return self.target.adopts and item.claims is not None

    async def plant(self, namespace: str, name: str, claims: SourceRef | None, seed: int) -> Foreign:
        """Create one on the target (its namespace too, if missing)."""
        api, kind = self.target.target, self.target.kind
        await api.call("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}}, ok=(409,))
        token = uuid.UUID(int=seed).hex[-12:]
        content = {"size": str(seed % 1000), "color": f"foreign-{token}", LOCAL_FIELD: f"foreign-{token}"}
        body = kind.body(
            name,
            content,
            {"owner": f"foreign-{token}"},
            annotations={"soak.example/made-by": f"hand-{token}"},
        )
        _, created = await api.call("POST", kind.collection(namespace), body)
        before = fingerprint(created, kind.content)
        item = Foreign(
            f"{namespace}/{name}", kind.path(namespace, name), before, claims, content[LOCAL_FIELD]
        )
        self.items.append(item)
        return item

    async def verdict(self, example: Callable[[str, str], None]) -> Verdict:
        """Read every one again: untouched, changed or deleted (adopted ones: adopted or not yet)."""
        verdict = Verdict()
        for item in self.items:
            status, now = await self.target.target.call("GET", item.path, ok=ANY_STATUS)
            if self.adopted(item):
                verdict.adoptable += 1
                verdict.adopted += status == 200 and self.target.ref_of(now) == item.claims
            elif status == 404:
                verdict.deleted += 1
                example("foreign object deleted", item.place)
            elif fingerprint(now, self.target.kind.content) != item.before:
                verdict.changed += 1
                example(
                    "foreign object changed",
                    f"{item.place}: now {fingerprint(now, self.target.kind.content)}",
                )
            else:
                verdict.untouched += 1
        return verdict
