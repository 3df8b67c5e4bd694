"""Soak run of publish mode (issue 9): chaos on a live stack, then every copy must equal its source.

Starts the stack of ``bench.e2e`` (service and kcp devclusters, 10 team workspaces binding the export,
``syncflow watch``/``beat`` and N ``worker -c 1`` process groups) on a private ``redis-server``, creates
2,000 objects over the workspaces and waits for their copies, then for ``--chaos`` seconds:

- random spec edits and deletes (and re-creates of deleted names) in kcp;
- random edits of the local copies: a kcp-set field changed (a later kcp edit must win), a local-only
  field added (it must survive), the copy deleted (syncflow must re-create it);
- a worker SIGKILLed every ``--kill-every`` seconds (a supervisor loop restarts dead workers);
- kcp's devcluster SIGSTOPped for ``--pause`` seconds, then SIGCONTed;
- Redis FLUSHALLed once.

Then the chaos stops, every locally overridden kcp field gets one more kcp edit, and the run waits until
every kcp object has exactly one copy whose spec equals the source's (plus its surviving local-only
field), no copy is left without its source, no kcp object is stuck terminating and nothing is parked.
It prints the counts and exits 1 if that never happens within ``--converge`` seconds.

Run: ``.venv/bin/python -m bench.soak`` (about 10 to 15 min), ``--quick`` for a ~2 min smoke run.
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
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from pydantic import BaseModel, PositiveFloat, PositiveInt
from redis import Redis

from bench.e2e import GROUP, PLURAL, Bench, Stack, widget
from bench.support import load_average
from syncflow.demo import redis as demo_redis
from syncflow.demo.stack import Stack as ProcessStack
from syncflow.sync.keys import owner_ref

RUN = "soak"
LOCAL_FIELD = "localNote"
ANY_STATUS = tuple(range(300, 600))
REQUEST_TIMEOUT = 20.0
CLIENTS = 4


class Options(BaseModel):
    """The sizes and durations of one soak run (seconds unless named otherwise)."""

    objects: PositiveInt = 2_000
    workspaces: PositiveInt = 10
    workers: PositiveInt = 2
    rate: PositiveFloat = 10.0
    chaos: PositiveFloat = 300.0
    kill_every: PositiveFloat = 5.0
    pause_at: float = 30.0
    pause: float = 180.0
    flush_at: float = 250.0
    converge: PositiveFloat = 900.0
    seed: int = 9


QUICK = {
    "objects": 200,
    "workspaces": 4,
    "chaos": 60.0,
    "pause_at": 10.0,
    "pause": 20.0,
    "flush_at": 45.0,
    "converge": 240.0,
}


@dataclass
class Source:
    """One kcp object as the soak last left it, and what it did to its local copy."""

    team: int
    name: str
    stable: bool  # never deleted in kcp; only these get local field edits
    spec: dict[str, Any]
    exists: bool = True
    note: str | None = None  # local-only field that must survive
    overridden: bool = False  # a kcp-set field edited locally; the next kcp edit must win


@dataclass
class Tally:
    """One convergence check."""

    sources: int = 0
    equal: int = 0
    missing: int = 0
    stale: int = 0
    duplicated: int = 0
    orphaned: int = 0
    terminating: int = 0
    notes_kept: int = 0
    notes_lost: int = 0
    parked: int = 0
    busy: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        """Every copy equal to its source, nothing left over, nothing parked."""
        bad = self.missing + self.stale + self.duplicated + self.orphaned + self.terminating
        return bad + self.notes_lost + self.parked == 0

    def line(self) -> str:
        """The figures on one line."""
        return (
            f"sources {self.sources}  copies equal {self.equal} / missing {self.missing} / stale {self.stale}"
            f" / duplicated {self.duplicated} / orphaned {self.orphaned}; kcp terminating {self.terminating};"
            f" local-only fields kept {self.notes_kept} / lost {self.notes_lost}; parked {self.parked};"
            f" queue busy {self.busy}"
        )


def fresh_spec(rng: random.Random) -> dict[str, Any]:
    """A spec no earlier edit has written (the colour is new every time)."""
    return {"size": rng.randint(1, 1000), "color": uuid.UUID(int=rng.getrandbits(128)).hex[:16]}


class Soak:
    """The chaos, the supervisor of the workers and the convergence check over one ``Bench``."""

    def __init__(self, bench: Bench, options: Options, redis_url: str) -> None:
        self.bench, self.options, self.redis_url = bench, options, redis_url
        self.rng = random.Random(options.seed)
        self.sources: dict[tuple[int, str], Source] = {}
        self.copy_paths: dict[tuple[int, str], str] = {}
        self.busy: set[tuple[int, str]] = set()
        self.counts: Counter[str] = Counter()
        self.paused = False
        self.kcp_inflight = 0
        self.workers: dict[int, str] = {}  # slot -> process name
        self.incarnations = 0
        self.killed: set[str] = set()
        self.journal: list[str] = []  # one line per chaos operation, written to soak-ops.log

    # --- kcp and the copies -------------------------------------------------------------------------

    def kcp_collection(self, source: Source) -> str:
        return f"/clusters/{self.bench.teams[source.team]}/apis/{GROUP}/v1/namespaces/default/{PLURAL}"

    async def kcp_call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """A kcp request, counted as in flight so the pause can wait for none."""
        self.kcp_inflight += 1
        try:
            return await self.bench.kcp.call(method, path, body, ok=ANY_STATUS)
        finally:
            self.kcp_inflight -= 1

    async def local_copies(self) -> list[dict[str, Any]]:
        """Every widget of the service cluster (copies, and anything that should not be there)."""
        _, listed = await self.bench.service.call("GET", f"/apis/{GROUP}/v1/{PLURAL}")
        return list(listed["items"])

    def source_of(self, copy: dict[str, Any]) -> tuple[int, str] | None:
        """The (team, name) of the kcp object a copy belongs to, from its sync labels."""
        owner = owner_ref(copy)
        if owner is None or owner.cluster not in self.bench.clusters:
            return None
        return self.bench.clusters.index(owner.cluster), owner.name

    async def populate(self) -> float:
        """Create the objects in kcp and wait until every copy exists; returns the seconds it took."""
        names = [f"{RUN}-{i}" for i in range(self.options.objects)]
        started = time.monotonic()
        await self.bench.create_all(names, RUN)
        teams = len(self.bench.teams)
        for i, name in enumerate(names):
            spec = widget(name, RUN)["spec"]
            self.sources[(i % teams, name)] = Source(i % teams, name, stable=i % 2 == 0, spec=spec)

        async def all_copies() -> list[dict[str, Any]] | None:
            copies = await self.local_copies()
            return copies if len(copies) >= len(names) else None

        copies = await self.bench.stack.wait(all_copies, 900, f"{len(names)} copies", every=1.0)
        for copy in copies:
            if (key := self.source_of(copy)) is not None:
                meta = copy["metadata"]
                self.copy_paths[key] = (
                    f"/apis/{GROUP}/v1/namespaces/{meta['namespace']}/{PLURAL}/{meta['name']}"
                )
        return time.monotonic() - started

    # --- chaos operations (each on a source no other client is working on) --------------------------

    async def kcp_edit(self, source: Source) -> bool:
        """Replace the source's spec in kcp; True if kcp took it."""
        path = f"{self.kcp_collection(source)}/{source.name}"
        status, current = await self.kcp_call("GET", path)
        if status != 200 or current["metadata"].get("deletionTimestamp"):
            self.counts[f"kcp edit skipped ({status})"] += 1
            return False
        spec = fresh_spec(self.rng)
        status, _ = await self.kcp_call("PUT", path, {**current, "spec": spec})
        if status != 200:
            self.counts[f"kcp edit refused ({status})"] += 1
            return False
        source.spec, source.overridden = spec, False
        self.counts["kcp spec edits"] += 1
        return True

    async def kcp_delete(self, source: Source) -> None:
        status, _ = await self.kcp_call("DELETE", f"{self.kcp_collection(source)}/{source.name}")
        if status in (200, 202):
            source.exists, source.note, source.overridden = False, None, False
            self.counts["kcp deletes"] += 1
        else:
            self.counts[f"kcp delete refused ({status})"] += 1

    async def kcp_recreate(self, source: Source) -> None:
        spec = fresh_spec(self.rng)
        status, _ = await self.kcp_call(
            "POST", self.kcp_collection(source), {**widget(source.name, RUN), "spec": spec}
        )
        if status == 201:
            source.exists, source.spec = True, spec
            self.counts["kcp re-creates"] += 1
        else:  # 409: the old one is still terminating (syncflow's finalizer)
            self.counts[f"kcp re-create refused ({status})"] += 1

    async def local_edit(self, source: Source, local_only: bool) -> None:
        """Edit the copy: a local-only field, or a field kcp sets (drift kept until kcp changes it)."""
        path = self.copy_paths[(source.team, source.name)]
        status, copy = await self.bench.service.call("GET", path, ok=ANY_STATUS)
        if status != 200:
            self.counts[f"local edit skipped ({status})"] += 1
            return
        value = uuid.UUID(int=self.rng.getrandbits(128)).hex[:12]
        copy["spec"] = {**copy.get("spec", {}), LOCAL_FIELD if local_only else "color": f"local-{value}"}
        status, _ = await self.bench.service.call("PUT", path, copy, ok=ANY_STATUS)
        if status != 200:
            self.counts[f"local edit refused ({status})"] += 1
        elif local_only:
            source.note = f"local-{value}"
            self.counts["local-only field edits"] += 1
        else:
            source.overridden = True
            self.counts["local edits of kcp fields"] += 1

    async def local_delete(self, source: Source) -> None:
        path = self.copy_paths[(source.team, source.name)]
        status, _ = await self.bench.service.call("DELETE", path, ok=ANY_STATUS)
        if status in (200, 202):
            source.note, source.overridden = None, False
            self.counts["local copy deletes"] += 1
        else:
            self.counts[f"local delete skipped ({status})"] += 1

    async def one_operation(self) -> None:
        """A random operation on a random idle source (kcp ones only while kcp is not paused)."""
        idle = [s for key, s in self.sources.items() if key not in self.busy]
        existing = [s for s in idle if s.exists]
        choices: list[tuple[str, list[Source], int]] = [
            ("local_only", [s for s in existing if s.stable], 2),
            ("local_field", [s for s in existing if s.stable], 2),
            ("local_delete", existing, 1),
        ]
        if not self.paused:
            choices += [
                ("kcp_edit", existing, 4),
                ("kcp_delete", [s for s in existing if not s.stable], 1),
                ("kcp_recreate", [s for s in idle if not s.exists], 1),
            ]
        choices = [c for c in choices if c[1]]
        if not choices:
            return
        kind, pool, _ = self.rng.choices(choices, weights=[c[2] for c in choices])[0]
        source = self.rng.choice(pool)
        key = (source.team, source.name)
        self.busy.add(key)
        try:
            if kind.startswith("local_") and kind != "local_delete":
                await self.local_edit(source, local_only=kind == "local_only")
            else:
                await getattr(self, kind)(source)
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.counts[f"{kind} network errors ({type(exc).__name__})"] += 1
        finally:
            self.busy.discard(key)
            self.note(f"{kind} {self.bench.clusters[source.team]} {source.name}")

    async def client(self, until: float) -> None:
        """Operations at ``rate / CLIENTS`` per second until ``until``."""
        interval = CLIENTS / self.options.rate
        while (now := time.monotonic()) < until:
            await self.one_operation()
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - now)))

    # --- workers, kcp pause, Redis flush --------------------------------------------------------------

    def note(self, what: str) -> None:
        """Add a line to the journal."""
        self.journal.append(f"{time.strftime('%H:%M:%S')} {what}")

    def start_worker(self, slot: int) -> None:
        self.incarnations += 1
        self.bench.start_worker(self.incarnations, ready=False)
        self.workers[slot] = f"worker-{self.incarnations}"

    def supervise(self) -> None:
        """Restart every worker that is dead (killed by the soak, or exited on its own)."""
        for slot, name in list(self.workers.items()):
            process = self.bench.stack.processes[name]
            if process.poll() is None:
                continue
            if name not in self.killed:
                self.counts[f"worker exits on their own (code {process.returncode})"] += 1
            self.bench.stack.processes.pop(name)
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
            process = self.bench.stack.processes[name]
            if process.poll() is not None:
                continue
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            self.killed.add(name)
            self.note(f"SIGKILL {name}")
            self.counts["worker SIGKILLs"] += 1
            self.supervise()

    async def pause_kcp(self, started: float) -> None:
        """SIGSTOP kcp's devcluster for ``pause`` seconds (after the soak's own kcp calls finish)."""
        await asyncio.sleep(max(0.0, started + self.options.pause_at - time.monotonic()))
        self.paused = True

        async def drained() -> bool | None:
            return True if self.kcp_inflight == 0 else None

        await self.bench.stack.wait(drained, 60, "the soak's kcp calls to finish", every=0.05)
        kcp = self.bench.stack.processes["kcp"]
        os.killpg(kcp.pid, signal.SIGSTOP)
        self.note("SIGSTOP kcp")
        stopped = time.monotonic()
        try:
            await asyncio.sleep(self.options.pause)
        finally:
            os.killpg(kcp.pid, signal.SIGCONT)
            self.note("SIGCONT kcp")
            self.paused = False
        self.counts["kcp paused (s)"] = round(time.monotonic() - stopped)
        self.counts["kcp paused at (s into chaos)"] = round(stopped - started)

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
        until = started + self.options.chaos
        await asyncio.gather(
            *(self.client(until) for _ in range(CLIENTS)),
            self.killer(until),
            self.supervisor(until),
            self.pause_kcp(started),
            self.flush_redis(started),
        )

    async def settle_overrides(self) -> None:
        """One kcp edit of every source whose kcp-set field was last changed locally: kcp must win."""
        for source in [s for s in self.sources.values() if s.exists and s.overridden]:

            async def edited(source: Source = source) -> bool | None:
                return True if await self.kcp_edit(source) else None

            await self.bench.stack.wait(edited, 60, f"a kcp edit of {source.name}", every=0.2)
            self.counts["kcp edits after local overrides"] += 1

    # --- convergence ----------------------------------------------------------------------------------

    async def check(self) -> Tally:
        """Compare every kcp object with its copies, and read the parked keys."""
        tally = Tally()
        live: dict[tuple[int, str], dict[str, Any]] = {}
        for team, path in enumerate(self.bench.teams):
            _, listed = await self.bench.kcp.call("GET", f"/clusters/{path}/apis/{GROUP}/v1/{PLURAL}")
            for item in listed["items"]:
                if item["metadata"].get("deletionTimestamp"):
                    tally.terminating += 1
                else:
                    live[(team, item["metadata"]["name"])] = item
        copies: dict[tuple[int, str], list[dict[str, Any]]] = {}
        for copy in await self.local_copies():
            key = self.source_of(copy)
            if key is None or key not in live:
                tally.orphaned += 1
                tally.examples.append(f"orphan {copy['metadata']['namespace']}/{copy['metadata']['name']}")
            else:
                copies.setdefault(key, []).append(copy)
        tally.sources = len(live)
        for key, source in live.items():
            found = copies.get(key, [])
            if len(found) != 1:
                tally.missing += not found
                tally.duplicated += len(found) > 1
                tally.examples.append(f"{len(found)} copies of {key}")
                continue
            spec = dict(found[0].get("spec", {}))
            note = spec.pop(LOCAL_FIELD, None)
            if spec == source.get("spec"):
                tally.equal += 1
            else:
                tally.stale += 1
                tally.examples.append(f"stale {key}: {spec} != {source.get('spec')}")
            expected = self.sources[key].note
            if expected is not None:
                tally.notes_kept += note == expected
                tally.notes_lost += note != expected
        tally.parked = self.bench.queue.service.parked_count()
        tally.busy = self.bench.queue.busy()
        if tally.parked:
            tally.examples += [f"parked {f.key}: {f.error}" for f in self.bench.queue.service.parked(limit=3)]
        return tally

    async def converge(self) -> tuple[Tally, float | None]:
        """Check every 2 s until converged or ``converge`` seconds passed (progress on stderr every
        30 s); returns the last tally."""
        started = shown = time.monotonic()
        while True:
            self.supervise()
            tally = await self.check()
            if tally.converged:
                return tally, time.monotonic() - started
            if time.monotonic() - started > self.options.converge:
                return tally, None
            if time.monotonic() - shown >= 30:
                shown = time.monotonic()
                print(f"converging ({shown - started:.0f} s): {tally.line()}", file=sys.stderr, flush=True)
            await asyncio.sleep(2.0)


async def run(options: Options, logs: str | None) -> int:
    """The whole soak; returns the exit code."""
    load_before = os.getloadavg()
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(tempfile.mkdtemp(prefix="soak-", dir=logs) if logs else scratch)
        processes = ProcessStack(work)
        budget = 1200 + options.chaos + options.converge
        stack = Stack(work, f"soak{uuid.uuid4().hex[:8]}", budget)
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
        try:
            redis = demo_redis.provide(processes, None)
            async with aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=64), timeout=timeout
            ) as session:
                bench = Bench(stack, session, options.workspaces, redis.url)
                soak = Soak(bench, options, redis.url)
                try:
                    await bench.setup()
                    setup_s = time.monotonic() - began
                    soak.workers[0], soak.incarnations = "worker-1", 1  # started by the set-up
                    for slot in range(1, options.workers):
                        soak.start_worker(slot)
                    populate_s = await soak.populate()
                    chaos_began = time.monotonic()
                    await soak.chaos()
                    chaos_s = time.monotonic() - chaos_began
                    await soak.settle_overrides()
                    tally, converged_s = await soak.converge()
                finally:
                    stack.stop_all()
                    bench.queue.close()
                    (work / "soak-ops.log").write_text("\n".join(soak.journal) + "\n")
        finally:
            processes.stop()
        lines = [
            f"soak: {options.objects} objects over {options.workspaces} workspaces, {options.workers} workers"
            f" (-c 1), {options.rate:g} operations/s for {chaos_s:.0f} s of chaos, seed {options.seed}",
            f"setup {setup_s:.0f} s; {options.objects} objects created and synced in {populate_s:.0f} s",
            *(f"  {what:40} {n}" for what, n in sorted(soak.counts.items())),
            f"converged after {converged_s:.1f} s"
            if converged_s is not None
            else f"NOT converged within {options.converge:.0f} s",
            f"  {tally.line()}",
            *(f"  e.g. {example[:300]}" for example in tally.examples[:10]),
            f"total {time.monotonic() - began:.0f} s; {load_average(load_before)}",
        ]
        if logs:
            lines.append(f"logs: {work}")
        print("\n".join(lines), flush=True)
    return 0 if converged_s is not None else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"a ~2 min smoke run: {QUICK}")
    for name, spec in Options.model_fields.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=type(spec.default), help=f"default {spec.default:g}"
        )
    parser.add_argument("--logs", help="keep the process logs in a new directory under this one")
    args = vars(parser.parse_args())
    given = {k: v for k, v in args.items() if k in Options.model_fields and v is not None}
    chosen = Options.model_validate({**(QUICK if args["quick"] else {}), **given})
    sys.exit(asyncio.run(run(chosen, args["logs"])))
