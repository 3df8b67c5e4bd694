"""Runs the demo: starts the stack, plays the scenario, then serves until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from kubernetes.client.exceptions import ApiException
from redis import Redis

from syncflow.api import crdgen, install
from syncflow.demo import clusters, edge, launch, manifests, workload
from syncflow.demo.play import DemoMode, DemoRun
from syncflow.demo.progress import Progress
from syncflow.demo.scenario import ORG, TEAM, Scenario
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from syncflow.queue.layout import forget_agent
from syncflow.runtime import redis as demo_redis
from syncflow.runtime.stack import Stack, StepError
from syncflow.util.logs import log_event
from syncflow.util.neterrors import status_message

logger = logging.getLogger(__name__)

AGENT = "demo"
NAMESPACE = "syncflow"


@dataclass(frozen=True)
class DemoOptions:
    """What ``syncflow demo`` was asked to do."""

    workdir: Path | None
    redis_url: str | None
    once: bool
    step_timeout: float = 60.0
    mode: str = "publish"


@dataclass(frozen=True)
class Kubeconfigs:
    """The kubeconfigs a user needs after the demo started."""

    service: Path
    kcp_org: Path
    kcp_team: Path


class _StopRequestedError(Exception):
    """SIGINT or SIGTERM arrived."""


def run(options: DemoOptions) -> int:
    """Run the demo; returns the exit code (0: success or interrupted, 1: a step failed)."""
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="replace")  # type: ignore[union-attr]
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="syncflow-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "pids").unlink(missing_ok=True)
    progress = Progress()
    stack = Stack(workdir)
    shared_redis: tuple[str, str] | None = None  # (url, agent) whose keys to remove at the end
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    progress.info(f"syncflow demo: work directory {workdir} (logs, kubeconfigs)")
    try:
        redis = demo_redis.provide(stack, options.redis_url)
        progress.done(f"Redis: {redis.description}")
        agent = AGENT if redis.private else f"{AGENT}-{uuid.uuid4().hex[:6]}"
        if not redis.private:
            shared_redis = (redis.url, agent)
        metrics = launch.metrics_addresses()
        for line in _attach_hints(redis.url, agent, metrics):
            progress.info(line)
        demo = DemoRun(stack, progress, redis.url, agent, options.step_timeout, options.once, metrics)
        hints = MODES[options.mode](demo)
        if options.once:
            progress.info("demo finished: every step passed")
            return 0
        for line in hints:
            progress.info(line)
        while True:
            signal.pause()
    except _StopRequestedError:
        progress.info("stopping…")
        return 0
    except StepError as exc:
        progress.failed(str(exc))
        for name in exc.logs:
            progress.info(f"--- last lines of {workdir / (name + '.log')}:\n{stack.tail(name)}")
        return 1
    except ApiException as exc:  # a step's own request refused: the scenario's fault, not syncflow's
        progress.failed(status_message(exc))
        return 1
    finally:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        stack.stop()
        if shared_redis is not None:
            _forget_agent(*shared_redis)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        progress.info(f"stopped; logs are in {workdir}")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise _StopRequestedError(signal.Signals(signum).name)


def _attach_hints(redis_url: str, agent: str, metrics: Mapping[str, str]) -> list[str]:
    """What an operator needs to watch the demo's agent with Flower, the sync console and Prometheus."""
    return [
        "attach Flower, the sync console and Prometheus (the metrics answer once the agent runs):",
        f"  Redis:      {redis_url}",
        f"  agent:      {agent}",
        f"  Flower:     {launch.flower_command(redis_url, agent)}",
        f"  console:    {launch.console_command(redis_url, agent, metrics['worker'])}",
        *(f"  metrics:    http://{address}/metrics ({role})" for role, address in metrics.items()),
    ]


def _publish(run: DemoRun) -> list[str]:
    """Publish mode: a CRD published from the service cluster, bound in a workspace, an object synced."""
    scenario, kubeconfigs = _start(run)
    _play(scenario, run.progress, run.agent, run.once)
    return _hints(kubeconfigs)


def _start(run: DemoRun) -> tuple[Scenario, Kubeconfigs]:
    """Start both devclusters, prepare them as an operator would, then the worker, beat and watcher."""
    stack, progress, timeout = run.stack, run.progress, run.timeout
    kcp = launch.start_devcluster(stack, "kcp", kcp=True)
    progress.done(f"kcp devcluster serving at {kcp.url}")
    service_dc = launch.start_devcluster(stack, "service", kcp=False)
    progress.done(f"service-cluster devcluster serving at {service_dc.url}")
    install.apply_crds(
        crdgen.crds_for("publish"),
        kubeconfig=str(service_dc.kubeconfig),
        context=None,
        timeout=timeout,
        echo=_log,
    )
    service = JsonApi(load_client(str(service_dc.kubeconfig)))
    service.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    progress.done(f"service cluster: syncflow CRDs installed, namespace {NAMESPACE} created")
    scenario = Scenario(stack, service, JsonApi(load_client(str(kcp.kubeconfig))), timeout)
    progress.done(scenario.create_org())
    kubeconfigs = Kubeconfigs(
        service=service_dc.kubeconfig,
        kcp_org=launch.workspace_kubeconfig(
            kcp.kubeconfig, stack.workdir / "kcp-org.kubeconfig", f"{kcp.url}/clusters/{ORG}"
        ),
        kcp_team=launch.workspace_kubeconfig(
            kcp.kubeconfig, stack.workdir / "kcp-team.kubeconfig", f"{kcp.url}/clusters/{TEAM}"
        ),
    )
    launch.start_agent(
        stack,
        {
            "SYNCFLOW_REDIS_URL": run.redis_url,
            "SYNCFLOW_AGENT_NAME": run.agent,
            "SYNCFLOW_KUBECONFIG": str(kubeconfigs.service),
            "SYNCFLOW_KCP_KUBECONFIG": str(kubeconfigs.kcp_org),
            "SYNCFLOW_APIEXPORTENDPOINTSLICE_REF": manifests.EXPORT,
            "SYNCFLOW_NAMESPACE": NAMESPACE,
            "SYNCFLOW_BACKOFF_CAP": "2",
        },
        run.metrics,
    )
    progress.done("syncflow worker, beat and watcher running")
    return scenario, kubeconfigs


def _play(scenario: Scenario, progress: Progress, agent: str, once: bool) -> None:
    """The scenario: publish, bind, create, status up, delete; without ``once`` leave an object to explore."""
    progress.done(scenario.publish(agent))
    cluster = scenario.bind()
    progress.done(f"workspace {TEAM} (logical cluster {cluster}) binds the export, claims accepted")
    scenario.create_object("demo-db")
    progress.done(f"{manifests.KIND} default/demo-db created in {TEAM}")
    copy = scenario.local_copy(cluster, "demo-db")
    progress.done(f"local copy created: {copy['metadata']['namespace']}/{copy['metadata']['name']}")
    status = scenario.return_status(copy, "demo-db")
    progress.done(f"status returned to kcp: phase={status['phase']} endpoint={status['endpoint']}")
    scenario.delete(cluster, "demo-db")
    progress.done("deleted in kcp → local copy removed → kcp object gone")
    if not once:
        scenario.create_object("orders", engine="mysql")
        kept = scenario.local_copy(cluster, "orders")["metadata"]
        where = f"{kept['namespace']}/{kept['name']}"
        progress.done(f"{manifests.KIND} default/orders created and left for you: local copy {where}")


def _hints(kubeconfigs: Kubeconfigs) -> list[str]:
    kubectl = launch.kubectl_command()
    new_db = manifests.database_json("billing", engine="postgres", storage_gb=5)
    lines = ["", "kubeconfigs:"]
    for label, path in (
        (f"kcp workspace {TEAM}", kubeconfigs.kcp_team),
        (f"kcp workspace {ORG}", kubeconfigs.kcp_org),
        ("service cluster", kubeconfigs.service),
    ):
        lines.append(f"  {label + ':':<29} {path}")
    return [
        *lines,
        "try:",
        f"  {kubectl} --kubeconfig {kubeconfigs.kcp_team} get databases",
        f"  {kubectl} --kubeconfig {kubeconfigs.service} get databases -A --show-labels",
        f"  echo '{new_db}' | {kubectl} --kubeconfig {kubeconfigs.kcp_team} create -f -",
        "stop with Ctrl-C",
    ]


MODES: dict[str, DemoMode] = {
    "publish": _publish,
    "workload": workload.scenario,
    "edge": edge.scenario,
    "clusters": clusters.scenario,
}
"""Every ``syncflow demo --mode``: each starts its own clusters and agent and plays its steps."""


def _log(line: str) -> None:
    log_event(logger, "demo.crds", message=line)


def _forget_agent(url: str, agent: str) -> None:
    """Remove the demo agent's keys from a Redis the demo did not start."""
    client = Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
    try:
        forget_agent(client, agent)
    finally:
        client.close()
