"""Spurious deletions: every copy the target loses during a soak, judged against the soak's own deletions.

``DeletionWatch`` watches the target's copies (the agent's label selector) for the whole run and judges
every DELETED event: it is legitimate when the soak deleted that copy itself, or deleted its source,
shortly before; anything else is a copy syncflow deleted while its source still existed and was selected.
A watch that breaks (a paused target, a stream ended for falling behind) is opened again from a fresh
list, and a copy missing from that list counts as deleted when the list is read.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from bench.soaktargets import SoakTarget, SourceRef

SKEW = 1.0
"""Seconds a deletion may be seen before the soak's own record of its cause (clocks of one process)."""
WATCH_SECONDS = 300
RETRY = 1.0


@dataclass
class Cause:
    """A deletion the soak made, which accounts for one deletion of the copy from ``at`` to ``until``."""

    what: str
    at: float
    until: float = math.inf


class WatchBrokenError(Exception):
    """The watch cannot go on from its resourceVersion: list again."""


@dataclass
class DeletionWatch:
    """The target's copies on a watch, and the verdict on every deletion seen."""

    target: SoakTarget
    grace: float
    """Seconds a cause stays valid once it can no longer apply (a re-created source, a deleted copy)."""
    started: float = field(default_factory=time.monotonic)
    causes: dict[SourceRef, list[Cause]] = field(default_factory=dict)
    present: dict[str, SourceRef | None] = field(default_factory=dict)
    """The source of each copy on the target, by uid."""
    legitimate: int = 0
    spurious: list[tuple[float, SourceRef | None, str]] = field(default_factory=list)
    """(seconds into the watch, the copy's source, its namespace/name) of each spurious deletion."""
    relists: int = 0
    rv: str = ""

    def caused(self, ref: SourceRef, what: str, local: bool) -> Cause:
        """Record a deletion the soak is about to make (``local``: of the copy, else of the source)."""
        now = time.monotonic()
        cause = Cause(what, now, now + self.grace if local else math.inf)
        self.causes.setdefault(ref, []).append(cause)
        return cause

    def withdraw(self, ref: SourceRef, cause: Cause) -> None:
        """Forget a cause whose deletion the server refused."""
        self.causes[ref].remove(cause)

    def recreated(self, ref: SourceRef) -> None:
        """The source was created again: its earlier deletion accounts for no deletion after ``grace``."""
        now = time.monotonic()
        for cause in self.causes.get(ref, []):
            cause.until = min(cause.until, now + self.grace)

    def judge(self, ref: SourceRef | None, place: str) -> None:
        """One deletion of the copy at ``place``, seen now."""
        now = time.monotonic()
        causes = self.causes.get(ref, []) if ref else []
        valid = [c for c in causes if c.at <= now + SKEW and now <= c.until]
        if valid:
            causes.remove(min(valid, key=lambda c: c.at))
            self.legitimate += 1
        else:
            self.spurious.append((now - self.started, ref, place))

    def seen(self, obj: dict[str, Any]) -> None:
        """A copy as the watch shows it now."""
        meta = obj["metadata"]
        self.present[meta["uid"]] = self.target.ref_of(obj)

    async def relist(self) -> None:
        """List the copies; any the last list or the watch showed and this one does not was deleted."""
        _, listed = await self.target.target.call("GET", self.target.copies_path())
        items = listed["items"]
        now = {item["metadata"]["uid"]: item for item in items}
        for uid in [uid for uid in self.present if uid not in now]:
            self.judge(self.present.pop(uid), f"uid {uid} (missing from a list)")
        for item in items:
            self.seen(item)
        self.rv = listed["metadata"]["resourceVersion"]
        self.relists += 1

    async def stream(self) -> None:
        """Follow the watch from ``rv`` until the server ends it."""
        target = self.target
        url = (
            f"{target.target.url}{target.copies_path()}&watch=1&resourceVersion={self.rv}"
            f"&timeoutSeconds={WATCH_SECONDS}"
        )
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=WATCH_SECONDS + self.grace)
        async with target.session.get(url, timeout=timeout) as response:
            if response.status != 200:
                raise WatchBrokenError(f"watch answered {response.status}")
            async for line in response.content:
                self.event(orjson.loads(line))

    def event(self, event: dict[str, Any]) -> None:
        """One watch event."""
        kind, obj = event["type"], event["object"]
        if kind == "ERROR":
            raise WatchBrokenError(str(obj.get("message")))
        meta = obj["metadata"]
        self.rv = meta.get("resourceVersion") or self.rv
        if kind == "DELETED":
            self.present.pop(meta["uid"], None)
            self.judge(self.target.ref_of(obj), f"{meta.get('namespace')}/{meta['name']}")
        elif kind in ("ADDED", "MODIFIED"):
            self.seen(obj)

    async def run(self, opened: asyncio.Event) -> None:
        """Watch until cancelled; ``opened`` is set once the first list is read."""
        await self.relist()
        opened.set()
        while True:
            try:
                await self.stream()
            except (WatchBrokenError, aiohttp.ClientError, TimeoutError, ValueError):
                await asyncio.sleep(RETRY)
                await self.relisted()

    async def relisted(self) -> None:
        """``relist``, retried every second until the target answers."""
        while True:
            try:
                await self.relist()
                return
            except (aiohttp.ClientError, TimeoutError):
                await asyncio.sleep(RETRY)
