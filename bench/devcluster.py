"""Benchmark of the devcluster API server, as a client sees it over HTTP.

Plain mode: creates/s with 1 and 8 concurrent clients (ConfigMaps, and Pods and Deployments,
which the server defaults on create), the time to list 10,000 objects, and the latency from a
write to its watch event across 10 watchers (p50/p99). The baseline, measured in
the same run against the same server, is the rate of trivial ``GET /healthz`` requests: the HTTP
floor that every API call pays.

kcp mode: 10,000 objects spread over 50 workspaces that bind one APIExport; the time to list them
all through the virtual workspace (``clusters/*``), with the plain 10,000-object list of the same
run as the baseline, and the watch latency through the virtual workspace with 10 watchers.

Run: ``.venv/bin/python bench/devcluster.py``.
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
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

BIN = Path(sys.executable).parent
JSON = {"Content-Type": "application/json"}
GROUP = "widgets.bench.io"


def start_server(workdir: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """Start a devcluster subprocess and return it with its URL."""
    process = subprocess.Popen(
        [str(BIN / "syncflow"), "devcluster", "--port", "0", "--kubeconfig", str(workdir / "kc"), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        match = re.match(r"devcluster (?:\(kcp\) )?serving at (\S+)", line)
        if match:
            # read what it prints from now on: a full pipe would stop the server at its next log line
            threading.Thread(target=deque, args=(process.stdout, 0), name="output", daemon=True).start()
            return process, match.group(1)
    raise SystemExit("devcluster did not start")


def stop_server(process: subprocess.Popen[str]) -> None:
    """Stop a devcluster subprocess."""
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=10)


def configmap(name: str, **annotations: str) -> dict[str, Any]:
    """A small ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "yes"}, "annotations": annotations},
        "data": {"key": "value", "other": "x" * 64},
    }


def pod(name: str) -> dict[str, Any]:
    """A small Pod, as a client sends it (the server fills its defaults)."""
    container = {"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "10m"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }


def deployment(name: str) -> dict[str, Any]:
    """A small Deployment, as a client sends it (the server fills its defaults)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


def widget(name: str, **annotations: str) -> dict[str, Any]:
    """A small custom object of the exported resource."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"size": 3, "color": "x" * 64},
    }


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST a JSON object; fail loudly on an error."""
    async with session.post(url, data=orjson.dumps(body), headers=JSON) as response:
        payload: dict[str, Any] = orjson.loads(await response.read())
        if response.status >= 300:
            raise SystemExit(f"POST {url}: {response.status} {payload}")
        return payload


async def rate(
    session: aiohttp.ClientSession, requests: list[tuple[str, str, bytes | None]], clients: int
) -> float:
    """Requests per second when ``clients`` workers share the list."""
    pending = list(reversed(requests))

    async def worker() -> None:
        while pending:
            method, url, body = pending.pop()
            async with session.request(method, url, data=body, headers=JSON) as response:
                await response.read()
                if response.status >= 300:
                    raise SystemExit(f"{method} {url}: {response.status} {await response.text()}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return len(requests) / (time.perf_counter() - started)


async def list_ms(session: aiohttp.ClientSession, url: str, expected: int) -> list[float]:
    """Milliseconds to list (and parse) ``url`` five times."""
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        async with session.get(url) as response:
            items = orjson.loads(await response.read())["items"]
        timings.append((time.perf_counter() - started) * 1000)
        if len(items) != expected:
            raise SystemExit(f"{url} listed {len(items)} objects, expected {expected}")
    return timings


async def watch_latencies(
    session: aiohttp.ClientSession,
    list_url: str,
    create: Callable[[int, str], Any],
    watchers: int,
    events: int,
) -> list[float]:
    """Milliseconds from each create (``create(i, sent)``) to its ADDED event, over every watcher."""
    async with session.get(list_url) as response:
        start_rv = orjson.loads(await response.read())["metadata"]["resourceVersion"]
    latencies: list[float] = []
    ready = asyncio.Event()
    connected = 0

    async def watcher() -> None:
        nonlocal connected
        async with session.get(
            f"{list_url}?watch=1&resourceVersion={start_rv}&timeoutSeconds=120"
        ) as response:
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
        await create(i, repr(time.time()))
        await asyncio.sleep(0.005)  # pacing: measure latency, not queueing behind a burst
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    return latencies


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def cpu_per_request(
    session: aiohttp.ClientSession, pid: int, requests: list[tuple[str, str, bytes | None]]
) -> tuple[float, float]:
    """(requests/s with 8 clients, server CPU microseconds per request): CPU time does not depend
    on what else the machine runs, so it compares runs on a busy machine."""
    before = cpu_seconds(pid)
    per_second = await rate(session, requests, 8)
    return per_second, (cpu_seconds(pid) - before) / len(requests) * 1e6


async def plain_figures(
    session: aiohttp.ClientSession, url: str, pid: int, objects: int, sequential: int
) -> dict[str, Any]:
    """Creates, list and watch figures of a plain devcluster."""
    health = [("GET", f"{url}/healthz", None)] * sequential
    figures: dict[str, Any] = {
        "floor_1": await rate(session, health, 1),
        "floor_8": await rate(session, health * 4, 8),
    }
    for namespace in ("seq", "bulk", "watched", "workloads"):
        await post(session, f"{url}/api/v1/namespaces", {"metadata": {"name": namespace}})
    seq = [
        ("POST", f"{url}/api/v1/namespaces/seq/configmaps", orjson.dumps(configmap(f"s{i}")))
        for i in range(sequential)
    ]
    figures["creates_1"] = await rate(session, seq, 1)
    bulk = [
        ("POST", f"{url}/api/v1/namespaces/bulk/configmaps", orjson.dumps(configmap(f"b{i}")))
        for i in range(objects)
    ]
    figures["creates_8"], figures["cpu_cm"] = await cpu_per_request(session, pid, bulk)
    figures["list"] = await list_ms(session, f"{url}/api/v1/namespaces/bulk/configmaps", objects)
    workloads = f"{url}/api/v1/namespaces/workloads/pods"
    pods = [("POST", workloads, orjson.dumps(pod(f"p{i}"))) for i in range(sequential)]
    figures["pods_8"], figures["cpu_pod"] = await cpu_per_request(session, pid, pods)
    deployments = f"{url}/apis/apps/v1/namespaces/workloads/deployments"
    deploys = [("POST", deployments, orjson.dumps(deployment(f"d{i}"))) for i in range(sequential)]
    figures["deployments_8"], figures["cpu_deploy"] = await cpu_per_request(session, pid, deploys)

    async def create(i: int, sent: str) -> None:
        await post(session, f"{url}/api/v1/namespaces/watched/configmaps", configmap(f"w{i}", sent=sent))

    figures["watch"] = await watch_latencies(
        session, f"{url}/api/v1/namespaces/watched/configmaps", create, 10, 200
    )
    return figures


async def kcp_figures(
    session: aiohttp.ClientSession, url: str, objects: int, workspaces: int
) -> dict[str, Any]:
    """Virtual-workspace list and watch figures over many binding workspaces."""
    apis = "apis/apis.kcp.io/v1alpha1"
    await post(
        session, f"{url}/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", {"metadata": {"name": "org"}}
    )
    await post(
        session,
        f"{url}/clusters/root:org/{apis}/apiresourceschemas",
        {
            "metadata": {"name": f"v1.widgets.{GROUP}"},
            "spec": {
                "group": GROUP,
                "scope": "Namespaced",
                "names": {
                    "plural": "widgets",
                    "singular": "widget",
                    "kind": "Widget",
                    "listKind": "WidgetList",
                },
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    }
                ],
            },
        },
    )
    await post(
        session,
        f"{url}/clusters/root:org/{apis}/apiexports",
        {"metadata": {"name": "widgets"}, "spec": {"latestResourceSchemas": [f"v1.widgets.{GROUP}"]}},
    )
    teams = [f"root:org:team-{i}" for i in range(workspaces)]
    for i, team in enumerate(teams):
        await post(
            session,
            f"{url}/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces",
            {"metadata": {"name": f"team-{i}"}},
        )
        await post(
            session,
            f"{url}/clusters/{team}/{apis}/apibindings",
            {
                "metadata": {"name": "widgets"},
                "spec": {"reference": {"export": {"path": "root:org", "name": "widgets"}}},
            },
        )
    async with session.get(f"{url}/clusters/root:org/{apis}/apiexportendpointslices/widgets") as response:
        vw = orjson.loads(await response.read())["status"]["endpoints"][0]["url"]
    creates = [
        (
            "POST",
            f"{url}/clusters/{teams[i % workspaces]}/apis/{GROUP}/v1/namespaces/default/widgets",
            orjson.dumps(widget(f"w{i}")),
        )
        for i in range(objects)
    ]
    figures: dict[str, Any] = {"creates_8": await rate(session, creates, 8)}
    wildcard = f"{vw}/clusters/*/apis/{GROUP}/v1/widgets"
    figures["list"] = await list_ms(session, wildcard, objects)

    async def create(i: int, sent: str) -> None:
        team = teams[i % workspaces]
        await post(
            session,
            f"{url}/clusters/{team}/apis/{GROUP}/v1/namespaces/default/widgets",
            widget(f"live-{i}", sent=sent),
        )

    figures["watch"] = await watch_latencies(session, wildcard, create, 10, 200)
    return figures


async def main(objects: int, sequential: int, workspaces: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp))
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
                plain = await plain_figures(session, url, process.pid, objects, sequential)
        finally:
            stop_server(process)
        process, url = start_server(Path(tmp), "--kcp")
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
                kcp = await kcp_figures(session, url, objects, workspaces)
        finally:
            stop_server(process)
    report(plain, kcp, objects, workspaces)


def report(plain: dict[str, Any], kcp: dict[str, Any], objects: int, workspaces: int) -> None:
    """Print the figures."""
    floor_1, floor_8, creates_1, creates_8 = (
        plain[k] for k in ("floor_1", "floor_8", "creates_1", "creates_8")
    )
    plain_list, vw_list = statistics.median(plain["list"]), statistics.median(kcp["list"])
    lines = [
        f"baseline GET /healthz:       {floor_1:8.0f} req/s (1 client)  {floor_8:8.0f} req/s (8)",
        f"creates:                     {creates_1:8.0f} obj/s (1 client)  {creates_8:8.0f} obj/s (8)",
        f"  ratio to baseline:         {creates_1 / floor_1:8.2f}"
        f"                  {creates_8 / floor_8:8.2f}",
        f"creates, 8 clients:          {plain['pods_8']:8.0f} Pods/s"
        f"  {plain['deployments_8']:8.0f} Deployments/s",
        f"server CPU per create:       {plain['cpu_cm']:8.0f} us ConfigMap  {plain['cpu_pod']:6.0f} us Pod"
        f"  {plain['cpu_deploy']:6.0f} us Deployment",
        f"list {objects} objects:        {plain_list:8.1f} ms median of 5 (min {min(plain['list']):.1f})",
        f"watch latency (10 watchers): p50 {percentile(plain['watch'], 50):.2f} ms"
        f"  p99 {percentile(plain['watch'], 99):.2f} ms  ({len(plain['watch'])} events)",
        f"kcp: {objects} objects in {workspaces} binding workspaces"
        f" (created at {kcp['creates_8']:.0f} obj/s)",
        f"  virtual workspace list *:  {vw_list:8.1f} ms median of 5 (min {min(kcp['list']):.1f}),"
        f" ratio to the plain list {vw_list / plain_list:.2f}",
        f"  virtual workspace watch *: p50 {percentile(kcp['watch'], 50):.2f} ms"
        f"  p99 {percentile(kcp['watch'], 99):.2f} ms  ({len(kcp['watch'])} events, 10 watchers)",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000, help="objects to create and list")
    parser.add_argument("--sequential", type=int, default=1_000, help="creates for the 1-client figure")
    parser.add_argument("--workspaces", type=int, default=50, help="binding workspaces in kcp mode")
    args = parser.parse_args()
    asyncio.run(main(args.objects, args.sequential, args.workspaces))
