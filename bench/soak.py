"""Soak run of every mode (issue 9): chaos on a live stack, then every copy must equal its source.

Nothing syncflow does not own may have been touched meanwhile.

``--mode publish|workload|clusters|edge`` (default publish; ``all`` runs the four one after another,
each on a fresh stack, and prints a summary table) starts that mode's stack (``bench.soaktargets``:
kcp and target devclusters, the mode's config, ``watch``, ``beat`` and N worker processes of one
Celery process each) on a private ``redis-server``, creates 2,000 source objects over 10 collections
(publish: Widgets in team workspaces; the other modes: ConfigMaps in namespaces of one workspace,
labelled for the one Cluster in clusters mode) and waits for their copies. Then it plants 20 foreign
objects on the target (no sync labels) in the copies' namespaces, half at the place the copy of a
new source lands (those sources are created then, and must stay parked as conflicts; publish mode
adopts them instead, as docs/ownership.md says), plus one in ``kube-system`` (edge and clusters: with
a source of that namespace and name, which must stay parked too). For ``--chaos`` seconds:

- random source edits, deletes and re-creates in kcp;
- random edits of the copies: a source-set field changed (the next source edit must win), a
  local-only field added (it must survive), the copy deleted (syncflow must re-create it);
- a worker SIGKILLed every ``--kill-every`` seconds (a supervisor loop restarts dead workers);
- kcp's devcluster SIGSTOPped for ``--pause`` seconds, later the target's devcluster as long;
- Redis FLUSHALLed once.

A watch of the target's copies records every deletion meanwhile. Then every locally overridden
source field gets one more source edit, and the run waits until every live source not blocked by a
foreign object has exactly one copy whose content equals the source's (plus its surviving local-only
field), no copy is left without its source, no source is stuck terminating, nothing is parked but
the expected conflicts, every foreign object is as it was created, and no copy was deleted that the
soak had not deleted (or deleted the source of) before. It prints the figures and exits 1 if that
never happens within ``--converge`` seconds.

Run: ``.venv/bin/python -m bench.soak [--mode all]`` (about 10 to 15 min a mode), ``--quick`` for a
2 to 4 min smoke run a mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    # run as a script: bench/queue.py would shadow the stdlib queue module; bench.support is wanted
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import asyncio
import os
import random
import signal
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

import aiohttp
from pydantic import BaseModel, NonNegativeInt, PositiveFloat, PositiveInt
from redis import Redis

from bench.e2e import BenchError, Stack
from bench.soakforeign import ANY_STATUS, LOCAL_FIELD, Foreign, ForeignObjects
from bench.soakreport import EXAMPLES, Outcome, Tally, table
from bench.soaktargets import RUN, SYSTEM, TARGETS, SoakTarget, SourceRef
from bench.soakwatch import DeletionWatch
from bench.support import HostReading, in_parallel, load_average, open_watch, run_dir
from syncflow.runtime import redis as demo_redis
from syncflow.runtime.stack import Stack as ProcessStack
from syncflow.sync.ownership import CONFLICT_CAUSES

REQUEST_TIMEOUT = 20.0
CLIENTS = 4
KCP, TARGET = "kcp", "target"


class Options(BaseModel):
    """The sizes and durations of one soak run (seconds unless named otherwise)."""

    objects: PositiveInt = 2_000
    workspaces: PositiveInt = 10
    """Source collections: team workspaces in publish mode, namespaces of one workspace otherwise."""
    workers: PositiveInt = 2
    rate: PositiveFloat = 10.0
    chaos: PositiveFloat = 300.0
    kill_every: PositiveFloat = 5.0
    pause_at: float = 30.0
    pause: float = 180.0
    target_pause_at: float = 220.0
    flush_at: float = 250.0
    foreign: NonNegativeInt = 20
    converge: PositiveFloat = 900.0
    seed: int = 9

    def window(self) -> float:
        """Seconds of chaos: ``chaos``, longer if a pause or the flush ends later."""
        return max(self.chaos, self.pause_at + self.pause, self.target_pause_at + self.pause, self.flush_at)


QUICK = {
    "objects": 200,
    "workspaces": 4,
    "chaos": 100.0,
    "pause_at": 15.0,
    "pause": 25.0,
    "target_pause_at": 55.0,
    "flush_at": 90.0,
    "converge": 240.0,
}


@dataclass
class Source:
    """One source object as the soak last left it, and what it did to its copy."""

    ref: SourceRef
    stable: bool  # never deleted in kcp; only these get local field edits
    content: dict[str, str]
    exists: bool = True
    note: str | None = None  # local-only field that must survive
    overridden: bool = False  # a source-set field edited locally; the next source edit must win
    blocked: bool = False  # a foreign object (or a system namespace) holds its copy's place: parked


class Soak:
    """The chaos, the supervisor of the workers and the convergence check over one ``SoakTarget``."""

    def __init__(self, target: SoakTarget, options: Options, redis_url: str) -> None:
        self.target, self.options, self.redis_url = target, options, redis_url
        self.rng = random.Random(options.seed)
        self.sources: dict[SourceRef, Source] = {}
        self.copy_paths: dict[SourceRef, str] = {}
        self.places: dict[tuple[str, str], str] = {}  # target namespace of each source collection
        self.busy: set[SourceRef] = set()
        self.counts: Counter[str] = Counter()
        self.paused: set[str] = set()
        self.pauses: list[tuple[str, float, float]] = []  # (devcluster, seconds, seconds into the chaos)
        self.inflight: Counter[str] = Counter()
        self.workers: dict[int, str] = {}  # slot -> process name
        self.incarnations = 0
        self.killed: set[str] = set()
        self.journal: list[str] = []  # one line per chaos operation, written to soak-ops.log
        self.foreign = ForeignObjects(target)
        self.deletions = DeletionWatch(target, grace=options.pause + 60)
        self.times: dict[str, float] = {}

    async def call(self, side: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """A request to kcp or the target, counted as in flight so a pause can wait for none."""
        api = self.target.kcp if side == KCP else self.target.target
        self.inflight[side] += 1
        try:
            return await api.call(method, path, body, ok=ANY_STATUS)
        finally:
            self.inflight[side] -= 1

    def fresh(self) -> dict[str, str]:
        """Content no earlier edit has written (the colour is new every time)."""
        return {
            "size": str(self.rng.randint(1, 1000)),
            "color": uuid.UUID(int=self.rng.getrandbits(128)).hex[:16],
        }

    def note(self, what: str) -> None:
        """Add a line to the journal."""
        self.journal.append(f"{time.strftime('%H:%M:%S')} {what}")

    # --- sources, copies and foreign objects --------------------------------------------------------

    async def create_source(self, ref: SourceRef, **state: Any) -> None:
        """Create a source object in kcp and track it."""
        content = self.fresh()
        body = self.target.source_body(ref, content)
        await self.target.kcp.call("POST", self.target.source_collection(ref.space, ref.namespace), body)
        self.sources[ref] = Source(ref, content=content, **state)

    async def populate(self) -> None:
        """Create the source objects and wait until every copy exists; learn where the copies land."""
        collections = self.target.collections
        refs = [
            SourceRef(*collections[i % len(collections)], f"{RUN}-{i}") for i in range(self.options.objects)
        ]
        await in_parallel(refs, lambda i, ref: self.create_source(ref, stable=i % 2 == 0))

        async def all_copies() -> list[dict[str, Any]] | None:
            copies = await self.target.copies()
            return copies if len(copies) >= len(refs) else None

        for copy in await self.target.stack.wait(all_copies, 900, f"{len(refs)} copies", every=1.0):
            if (ref := self.target.ref_of(copy)) is not None:
                meta = copy["metadata"]
                self.copy_paths[ref] = self.target.kind.path(meta["namespace"], meta["name"])
                self.places[(ref.space, ref.namespace)] = meta["namespace"]

    async def plant_foreign(self) -> None:
        """``foreign`` objects in the copies' namespaces, half of them at the place of a new source's copy
        (that source is created then), and one in ``kube-system`` (with its source where the mode would
        place its copy there); then wait until syncflow has dealt with the new sources."""
        collections = self.target.collections
        for i in range(self.options.foreign):
            space, namespace = collections[i % len(collections)]
            claims = SourceRef(space, namespace, f"claimed-{i}") if i < self.options.foreign // 2 else None
            name = self.target.copy_name(claims) if claims else f"foreign-{i}"
            await self.foreign.plant(self.places[(space, namespace)], name, claims, self.rng.getrandbits(64))
        system = SourceRef(collections[0][0], SYSTEM, "soak-system")
        claims = system if self.target.places_in_system else None
        await self.foreign.plant(SYSTEM, system.name, claims, self.rng.getrandbits(64))
        for item in self.foreign.items:
            if item.claims is not None:
                await self.create_claimant(item)
        await self.target.queue.idle(self.target.stack, 120)

    async def create_claimant(self, item: Foreign) -> None:
        """Create the source whose copy's place ``item`` holds: adopted where the mode adopts, else
        blocked."""
        ref = item.claims
        assert ref is not None
        if ref.namespace == SYSTEM:
            namespace = {"metadata": {"name": SYSTEM}}
            await self.target.kcp.call(
                "POST", f"/clusters/{ref.space}/api/v1/namespaces", namespace, ok=(409,)
            )
        if self.foreign.adopted(item):
            await self.create_source(ref, stable=True, note=item.note)
            self.copy_paths[ref] = item.path
        else:
            await self.create_source(ref, stable=True, blocked=True)

    # --- chaos operations (each on a source no other client is working on) --------------------------

    async def kcp_edit(self, source: Source) -> bool:
        """Replace the source's content in kcp; True if kcp took it."""
        path = self.target.source_path(source.ref)
        status, current = await self.call(KCP, "GET", path)
        if status != 200 or current["metadata"].get("deletionTimestamp"):
            self.counts[f"kcp edit skipped ({status})"] += 1
            return False
        content = self.fresh()
        status, _ = await self.call(KCP, "PUT", path, {**current, self.target.kind.content: content})
        if status != 200:
            self.counts[f"kcp edit refused ({status})"] += 1
            return False
        source.content, source.overridden = content, False
        self.counts["kcp edits"] += 1
        return True

    async def kcp_delete(self, source: Source) -> None:
        cause = self.deletions.caused(source.ref, "source deleted", local=False)
        status, _ = await self.call(KCP, "DELETE", self.target.source_path(source.ref))
        if status in (200, 202):
            source.exists, source.note, source.overridden = False, None, False
            self.counts["kcp deletes"] += 1
        else:
            self.deletions.withdraw(source.ref, cause)
            self.counts[f"kcp delete refused ({status})"] += 1

    async def kcp_recreate(self, source: Source) -> None:
        content = self.fresh()
        ref = source.ref
        body = self.target.source_body(ref, content)
        status, _ = await self.call(
            KCP, "POST", self.target.source_collection(ref.space, ref.namespace), body
        )
        if status == 201:
            source.exists, source.content = True, content
            self.deletions.recreated(ref)
            self.counts["kcp re-creates"] += 1
        else:  # 409: the old one is still terminating (syncflow's finalizer)
            self.counts[f"kcp re-create refused ({status})"] += 1

    async def local_edit(self, source: Source, local_only: bool) -> None:
        """Edit the copy: a local-only field, or a field the source sets (kept until the source changes)."""
        path = self.copy_paths[source.ref]
        status, copy = await self.call(TARGET, "GET", path)
        if status != 200:
            self.counts[f"local edit skipped ({status})"] += 1
            return
        value = f"local-{uuid.UUID(int=self.rng.getrandbits(128)).hex[:12]}"
        content = self.target.kind.content
        copy[content] = {**copy.get(content, {}), LOCAL_FIELD if local_only else "color": value}
        status, _ = await self.call(TARGET, "PUT", path, copy)
        if status != 200:
            self.counts[f"local edit refused ({status})"] += 1
        elif local_only:
            source.note = value
            self.counts["local-only field edits"] += 1
        else:
            source.overridden = True
            self.counts["local edits of source-set fields"] += 1

    async def local_delete(self, source: Source) -> None:
        cause = self.deletions.caused(source.ref, "copy deleted", local=True)
        status, _ = await self.call(TARGET, "DELETE", self.copy_paths[source.ref])
        if status in (200, 202):
            source.note, source.overridden = None, False
            self.counts["local copy deletes"] += 1
        else:
            self.deletions.withdraw(source.ref, cause)
            self.counts[f"local delete skipped ({status})"] += 1

    def choices(self) -> list[tuple[str, list[Source], int]]:
        """(operation, the idle sources it may work on, weight); none on a paused side. Blocked sources
        only get source edits (which must not reach the foreign object either)."""
        idle = [s for ref, s in self.sources.items() if ref not in self.busy]
        existing = [s for s in idle if s.exists]
        free = [s for s in existing if not s.blocked]
        stable = [s for s in free if s.stable]
        choices: list[tuple[str, list[Source], int]] = []
        if TARGET not in self.paused:
            choices += [("local_only", stable, 2), ("local_field", stable, 2), ("local_delete", free, 1)]
        if KCP not in self.paused:
            choices += [
                ("kcp_edit", existing, 4),
                ("kcp_delete", [s for s in free if not s.stable], 1),
                ("kcp_recreate", [s for s in idle if not s.exists], 1),
            ]
        return [c for c in choices if c[1]]

    async def one_operation(self) -> None:
        """A random operation on a random idle source."""
        choices = self.choices()
        if not choices:
            return
        kind, pool, _ = self.rng.choices(choices, weights=[c[2] for c in choices])[0]
        source = self.rng.choice(pool)
        self.busy.add(source.ref)
        try:
            if kind in ("local_only", "local_field"):
                await self.local_edit(source, local_only=kind == "local_only")
            else:
                await getattr(self, kind)(source)
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.counts[f"{kind} network errors ({type(exc).__name__})"] += 1
        finally:
            self.busy.discard(source.ref)
            self.note(f"{kind} {source.ref}")

    async def client(self, until: float) -> None:
        """Operations at ``rate / CLIENTS`` per second until ``until``."""
        interval = CLIENTS / self.options.rate
        while (now := time.monotonic()) < until:
            await self.one_operation()
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - now)))

    # --- workers, pauses, Redis flush -----------------------------------------------------------------

    def start_worker(self, slot: int) -> None:
        self.incarnations += 1
        self.workers[slot] = self.target.start_worker(self.incarnations)

    def supervise(self) -> None:
        """Restart every worker that is dead (killed by the soak, or exited on its own)."""
        processes = self.target.stack.processes
        for slot, name in list(self.workers.items()):
            process = processes[name]
            if process.poll() is None:
                continue
            if name not in self.killed:
                self.counts[f"worker exits on their own (code {process.returncode})"] += 1
            processes.pop(name)
            self.start_worker(slot)
            self.counts["worker restarts"] += 1

    async def supervisor(self, until: float) -> None:
        while time.monotonic() < until:
            self.supervise()
            await asyncio.sleep(0.5)

    async def killer(self, until: float) -> None:
        """SIGKILL a random worker's process group every ``kill_every`` seconds."""
        while time.monotonic() + self.options.kill_every < until:
            await asyncio.sleep(self.options.kill_every)
            name = self.workers[self.rng.choice(sorted(self.workers))]
            process = self.target.stack.processes[name]
            if process.poll() is not None:
                continue
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            self.killed.add(name)
            self.note(f"SIGKILL {name}")
            self.counts["worker SIGKILLs"] += 1
            self.supervise()

    async def pause(self, side: str, at: float, started: float) -> None:
        """SIGSTOP kcp's or the target's devcluster ``at`` seconds into the chaos for ``pause`` seconds
        (after the soak's own calls to it finish)."""
        if self.options.pause <= 0:
            return
        await asyncio.sleep(max(0.0, started + at - time.monotonic()))
        stack = self.target.stack
        name = "kcp" if side == KCP else self.target.target_process
        self.paused.add(side)

        async def drained() -> bool | None:
            return True if self.inflight[side] == 0 else None

        await stack.wait(drained, 60, f"the soak's calls to {name} to finish", every=0.05)
        process = stack.processes[name]
        os.killpg(process.pid, signal.SIGSTOP)
        self.note(f"SIGSTOP {name}")
        stopped = time.monotonic()
        try:
            await asyncio.sleep(self.options.pause)
        finally:
            os.killpg(process.pid, signal.SIGCONT)
            self.note(f"SIGCONT {name}")
            self.paused.discard(side)
        self.pauses.append(
            (name if side == KCP else f"target {name}", time.monotonic() - stopped, stopped - started)
        )

    async def flush_redis(self, started: float) -> None:
        await asyncio.sleep(max(0.0, started + self.options.flush_at - time.monotonic()))
        redis = Redis.from_url(self.redis_url, socket_timeout=10)
        try:
            redis.flushall()
            self.note("FLUSHALL")
        finally:
            redis.close()
        self.counts["Redis FLUSHALL"] += 1
        self.counts["Redis flushed at (s into chaos)"] = round(time.monotonic() - started)

    async def chaos(self) -> None:
        started = time.monotonic()
        until = started + self.options.window()
        await asyncio.gather(
            *(self.client(until) for _ in range(CLIENTS)),
            self.killer(until),
            self.supervisor(until),
            self.pause(KCP, self.options.pause_at, started),
            self.pause(TARGET, self.options.target_pause_at, started),
            self.flush_redis(started),
        )

    async def settle_overrides(self) -> None:
        """One source edit of every source whose source-set field was last changed locally: it must win."""
        for source in [s for s in self.sources.values() if s.exists and s.overridden]:

            async def edited(source: Source = source) -> bool | None:
                return True if await self.kcp_edit(source) else None

            await self.target.stack.wait(edited, 60, f"a kcp edit of {source.ref}", every=0.2)
            self.counts["kcp edits after local overrides"] += 1

    # --- convergence ----------------------------------------------------------------------------------

    async def check(self) -> Tally:
        """Compare every source with its copies; read the parked keys, the foreign objects and the
        deletions seen."""
        tally = Tally()
        live: dict[SourceRef, dict[str, Any]] = {}
        for ref, item in await self.target.sources():
            if item["metadata"].get("deletionTimestamp"):
                tally.terminating += 1
            else:
                live[ref] = item
        copies: dict[SourceRef, list[dict[str, Any]]] = {}
        for copy in await self.target.copies():
            owner = self.target.ref_of(copy)
            if owner is None or owner not in live:
                tally.orphaned += 1
                tally.example("orphan", f"{copy['metadata']['namespace']}/{copy['metadata']['name']}")
            else:
                copies.setdefault(owner, []).append(copy)
        tally.sources = len(live)
        for ref, item in live.items():
            self.compare(tally, ref, item, copies.get(ref, []))
        self.read_parked(tally, live)
        tally.foreign = await self.foreign.verdict(tally.example)
        tally.spurious, tally.deletions = len(self.deletions.spurious), self.deletions.legitimate
        for spurious in self.deletions.spurious[:EXAMPLES]:
            tally.example("spurious deletion", self.spurious_example(*spurious))
        tally.busy = self.target.queue.busy()
        return tally

    def compare(
        self, tally: Tally, ref: SourceRef, source: dict[str, Any], found: list[dict[str, Any]]
    ) -> None:
        """One live source against its copies."""
        known = self.sources.get(ref)
        if known is not None and known.blocked:
            tally.blocked_copied += bool(found)
            if found:
                tally.example("blocked source with a copy", str(ref))
            return
        if len(found) != 1:
            tally.missing += not found
            tally.duplicated += len(found) > 1
            tally.example(f"{len(found)} copies", str(ref))
            return
        field = self.target.kind.content
        content = dict(found[0].get(field) or {})
        note = content.pop(LOCAL_FIELD, None)
        if content == source.get(field):
            tally.equal += 1
        else:
            tally.stale += 1
            tally.example("stale", f"{ref}: {content} != {source.get(field)}")
        expected = known.note if known is not None else None
        if expected is not None:
            tally.notes_kept += note == expected
            tally.notes_lost += note != expected

    def read_parked(self, tally: Tally, live: dict[SourceRef, dict[str, Any]]) -> None:
        """The expected conflicts found parked, and anything else parked."""
        expected = {ref for ref, s in self.sources.items() if s.blocked and ref in live}
        found: set[SourceRef] = set()
        for failure in self.target.queue.service.parked(limit=100_000):
            ref = self.target.ref_of_key(failure.key)
            if ref in expected and failure.cause in CONFLICT_CAUSES:
                found.add(ref)
            else:
                tally.parked += 1
                tally.example("parked", f"{failure.key}: {failure.error}")
        tally.conflicts_expected, tally.conflicts_found = len(expected), len(found)
        for ref in sorted(expected - found):
            tally.example("conflict not parked", str(ref))

    def spurious_example(self, at: float, ref: SourceRef | None, place: str) -> str:
        """A spurious deletion, with the soak's last operations on its source."""
        ops = [line for line in self.journal if ref is not None and line.endswith(f" {ref}")][-3:]
        return f"{place} (source {ref}) {at:.0f} s into the watch; the soak's last operations on it: {ops}"

    async def converge(self, watch: asyncio.Task[None]) -> tuple[Tally, float | None]:
        """Check every 2 s until settled or ``converge`` seconds passed (progress on stderr every 30 s);
        returns the last tally and the seconds it took to settle."""
        started = shown = time.monotonic()
        while True:
            if watch.done():
                watch.result()  # the deletion watch's own failure
            self.supervise()
            tally = await self.check()
            if tally.settled:
                return tally, time.monotonic() - started
            if time.monotonic() - started > self.options.converge:
                return tally, None
            if time.monotonic() - shown >= 30:
                shown = time.monotonic()
                print(f"converging ({shown - started:.0f} s): {tally.line()}", file=sys.stderr, flush=True)
            await asyncio.sleep(2.0)

    async def run(self) -> tuple[Tally, float | None]:
        """The whole soak on a started target: populate, foreign objects, chaos, convergence."""
        began = time.monotonic()
        self.workers[0], self.incarnations = "worker-1", 1  # started with the stack
        for slot in range(1, self.options.workers):
            self.start_worker(slot)
        await self.populate()
        self.times["populate"] = time.monotonic() - began
        watch = await open_watch(self.deletions.run)
        try:
            await self.plant_foreign()
            began = time.monotonic()
            await self.chaos()
            self.times["chaos"] = time.monotonic() - began
            await self.settle_overrides()
            return await self.converge(watch)
        finally:
            watch.cancel()


def report(soak: Soak, setup_s: float, tally: Tally, settled_s: float | None) -> list[str]:
    """The mode's figures, as printed."""
    o, foreign = soak.options, soak.foreign.items
    if settled_s is None:
        verdict = f"NOT converged within {o.converge:.0f} s"
    elif tally.clean:
        verdict = f"converged after {settled_s:.1f} s"
    else:
        verdict = (
            f"FAILED: settled after {settled_s:.1f} s, but foreign objects were touched or copies deleted"
        )
    paused = ", ".join(f"{name} {s:.0f} s at {at:.0f} s" for name, s, at in soak.pauses)
    return [
        f"soak ({soak.target.mode}): {o.objects} objects over {o.workspaces} collections, {o.workers} workers"
        f" (one Celery process each), {o.rate:g} operations/s for {soak.times['chaos']:.0f} s of chaos,"
        f" seed {o.seed}",
        f"setup {setup_s:.0f} s; {o.objects} objects created and synced in {soak.times['populate']:.0f} s;"
        f" {len(foreign)} foreign objects on the target"
        f" ({sum(f.claims is not None for f in foreign)} at a source's copy's place)",
        *(f"  {what:40} {n}" for what, n in sorted(soak.counts.items())),
        f"  paused: {paused or 'nothing'}",
        verdict,
        f"  {tally.line()}",
        *(f"  e.g. {example[:300]}" for example in tally.shown()),
    ]


async def soak_mode(mode: str, options: Options, logs: str | None) -> Outcome:
    """One mode's soak on a fresh stack and Redis."""
    load_before = HostReading.now()
    began = time.monotonic()
    outcome = Outcome(mode)
    with tempfile.TemporaryDirectory() as scratch:
        work = run_dir(f"soak-{mode}-", logs, scratch)
        processes = ProcessStack(work)
        stack = Stack(work, f"soak{uuid.uuid4().hex[:8]}", 1200 + options.window() + options.converge)
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
        try:
            redis = demo_redis.provide(processes, None)
            async with aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=64), timeout=timeout
            ) as session:
                target = TARGETS[mode](stack, session, redis.url)
                soak = Soak(target, options, redis.url)
                try:
                    await target.start(options.workspaces)
                    setup_s = time.monotonic() - began
                    tally, settled_s = await soak.run()
                    outcome.lines = report(soak, setup_s, tally, settled_s)
                    outcome.tally, outcome.settled_s = tally, settled_s
                except BenchError as exc:
                    outcome.failure = str(exc)
                    outcome.lines = [f"soak ({mode}): {exc}"]
                finally:
                    target.close()
                    (work / "soak-ops.log").write_text("\n".join(soak.journal) + "\n")
                    outcome.kills = soak.counts["worker SIGKILLs"]
                    outcome.paused = ", ".join(f"{name} {s:.0f}s@{at:.0f}s" for name, s, at in soak.pauses)
        finally:
            processes.stop()
    outcome.wall_s = time.monotonic() - began
    outcome.load = (load_before.load[0], os.getloadavg()[0])
    outcome.lines += [
        f"total {outcome.wall_s:.0f} s; {load_average(load_before)}",
        *([f"logs: {work}"] if logs else []),
    ]
    return outcome


async def run(modes: list[str], options: Options, logs: str | None) -> int:
    """Every mode's soak, one after another; returns the exit code."""
    outcomes = []
    for mode in modes:
        outcome = await soak_mode(mode, options, logs)
        print("\n".join(outcome.lines), flush=True)
        outcomes.append(outcome)
    if len(modes) > 1:
        print("\n" + table(outcomes), flush=True)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mode", choices=[*TARGETS, "all"], default="publish", help="the mode to soak (all: each in turn)"
    )
    parser.add_argument("--quick", action="store_true", help=f"a 2 to 4 min smoke run a mode: {QUICK}")
    for name, spec in Options.model_fields.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=type(spec.default), help=f"default {spec.default:g}"
        )
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    args = vars(parser.parse_args())
    given = {k: v for k, v in args.items() if k in Options.model_fields and v is not None}
    chosen = Options.model_validate({**(QUICK if args["quick"] else {}), **given})
    modes = list(TARGETS) if args["mode"] == "all" else [args["mode"]]
    sys.exit(asyncio.run(run(modes, chosen, args["logs"])))
