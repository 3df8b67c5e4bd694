"""Benchmark of the devcluster API server, as a client sees it over HTTP.

Prints: creates/s with 1 and 8 concurrent clients, the time to list 10,000 objects, and the
latency from a write to its watch event across 10 watchers (p50/p99). The baseline, measured in
the same run against the same server, is the rate of trivial ``GET /healthz`` requests: the HTTP
floor that every API call pays. Run: ``.venv/bin/python bench/devcluster.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

BIN = Path(sys.executable).parent


def start_server(workdir: Path) -> tuple[subprocess.Popen[str], str]:
    """Start a devcluster subprocess and return it with its URL."""
    process = subprocess.Popen(
        [str(BIN / "syncflow"), "devcluster", "--port", "0", "--kubeconfig", str(workdir / "kc")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        match = re.match(r"devcluster serving at (\S+)", line)
        if match:
            return process, match.group(1)
    raise SystemExit("devcluster did not start")


def configmap(name: str, **annotations: str) -> bytes:
    """A small ConfigMap body."""
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"bench": "yes"}, "annotations": annotations},
            "data": {"key": "value", "other": "x" * 64},
        }
    )


async def rate(
    session: aiohttp.ClientSession, requests: list[tuple[str, str, bytes | None]], clients: int
) -> float:
    """Requests per second when ``clients`` workers share the list."""
    pending = list(reversed(requests))

    async def worker() -> None:
        while pending:
            method, url, body = pending.pop()
            async with session.request(
                method, url, data=body, headers={"Content-Type": "application/json"}
            ) as response:
                await response.read()
                if response.status >= 300:
                    raise SystemExit(f"{method} {url}: {response.status} {await response.text()}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return len(requests) / (time.perf_counter() - started)


async def create_namespace(session: aiohttp.ClientSession, url: str, name: str) -> None:
    """Create a namespace."""
    body = orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    async with session.post(
        f"{url}/api/v1/namespaces", data=body, headers={"Content-Type": "application/json"}
    ) as response:
        assert response.status == 201, await response.text()


async def watch_latencies(
    session: aiohttp.ClientSession, url: str, watchers: int, events: int
) -> list[float]:
    """Milliseconds from each create to its ADDED event, over every watcher."""
    await create_namespace(session, url, "watched")
    async with session.get(f"{url}/api/v1/namespaces/watched/configmaps") as response:
        start_rv = orjson.loads(await response.read())["metadata"]["resourceVersion"]
    latencies: list[float] = []
    ready = asyncio.Event()
    connected = 0

    async def watcher() -> None:
        nonlocal connected
        query = f"watch=1&resourceVersion={start_rv}&timeoutSeconds=120"
        path = f"{url}/api/v1/namespaces/watched/configmaps?{query}"
        async with session.get(path) as response:
            connected += 1
            if connected == watchers:
                ready.set()
            seen = 0
            async for line in response.content:
                event: dict[str, Any] = orjson.loads(line)
                sent = float(event["object"]["metadata"]["annotations"]["sent"])
                latencies.append((time.time() - sent) * 1000)
                seen += 1
                if seen == events:
                    return

    tasks = [asyncio.create_task(watcher()) for _ in range(watchers)]
    await asyncio.wait_for(ready.wait(), 10)
    for i in range(events):
        body = configmap(f"w{i}", sent=repr(time.time()))
        async with session.post(
            f"{url}/api/v1/namespaces/watched/configmaps",
            data=body,
            headers={"Content-Type": "application/json"},
        ) as response:
            await response.read()
        await asyncio.sleep(0.005)  # pacing: measure latency, not queueing behind a burst
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    return latencies


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def main(objects: int, sequential: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp))
        try:
            connector = aiohttp.TCPConnector(limit=64)
            async with aiohttp.ClientSession(connector=connector) as session:
                health = [("GET", f"{url}/healthz", None)] * sequential
                floor_1 = await rate(session, health, 1)
                floor_8 = await rate(session, health * 4, 8)
                await create_namespace(session, url, "seq")
                await create_namespace(session, url, "bulk")
                seq = [
                    ("POST", f"{url}/api/v1/namespaces/seq/configmaps", configmap(f"s{i}"))
                    for i in range(sequential)
                ]
                creates_1 = await rate(session, seq, 1)
                bulk = [
                    ("POST", f"{url}/api/v1/namespaces/bulk/configmaps", configmap(f"b{i}"))
                    for i in range(objects)
                ]
                creates_8 = await rate(session, bulk, 8)
                list_ms = []
                for _ in range(5):
                    started = time.perf_counter()
                    async with session.get(f"{url}/api/v1/namespaces/bulk/configmaps") as response:
                        items = orjson.loads(await response.read())["items"]
                    list_ms.append((time.perf_counter() - started) * 1000)
                    assert len(items) == objects
                latencies = await watch_latencies(session, url, watchers=10, events=200)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
    print(f"baseline GET /healthz:  {floor_1:8.0f} req/s (1 client)   {floor_8:8.0f} req/s (8 clients)")
    print(f"creates:                {creates_1:8.0f} obj/s (1 client)   {creates_8:8.0f} obj/s (8 clients)")
    print(f"  ratio to baseline:    {creates_1 / floor_1:8.2f}                {creates_8 / floor_8:8.2f}")
    print(
        f"list {objects} objects:   {statistics.median(list_ms):8.1f} ms median of 5 "
        f"(min {min(list_ms):.1f} ms)"
    )
    print(
        f"watch latency, 10 watchers:       p50 {percentile(latencies, 50):6.2f} ms   "
        f"p99 {percentile(latencies, 99):6.2f} ms   ({len(latencies)} events)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000, help="objects to create and list")
    parser.add_argument("--sequential", type=int, default=1_000, help="creates for the 1-client figure")
    args = parser.parse_args()
    asyncio.run(main(args.objects, args.sequential))
