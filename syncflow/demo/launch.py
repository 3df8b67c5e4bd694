"""Starts syncflow's own processes for the demo (devclusters, worker, beat, watcher) and waits for them."""

from __future__ import annotations

import functools
import re
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from syncflow.kube import kubeconfigs
from syncflow.runtime.stack import Stack, child_env, free_port, syncflow_command

START_TIMEOUT = 60.0
PUBLISH_TASKS = "syncflow.modes.publish.tasks"
_SERVING = re.compile(r"devcluster (?:\(kcp\) )?serving at (\S+)")


@dataclass(frozen=True)
class Devcluster:
    """A running devcluster: its URL and the kubeconfig it wrote."""

    url: str
    kubeconfig: Path


def start_devcluster(stack: Stack, name: str, kcp: bool) -> Devcluster:
    """Start ``syncflow devcluster`` on a free port and wait until it serves."""
    kubeconfig = stack.workdir / f"{name}.kubeconfig"
    argv = [*syncflow_command(), "devcluster", "--port", "0", "--kubeconfig", str(kubeconfig)]
    stack.start(name, [*argv, "--kcp"] if kcp else argv, child_env({}))

    def serving() -> str | None:
        match = _SERVING.search(stack.log_text(name))
        return match.group(1) if match and kubeconfig.exists() else None

    url = stack.wait(serving, START_TIMEOUT, f"{name} to serve", [name])
    return Devcluster(url, kubeconfig)


def workspace_kubeconfig(source: Path, target: Path, server: str) -> Path:
    """Copy a kubeconfig with every cluster's server set to ``server`` (e.g. one kcp workspace)."""
    config = yaml.safe_load(source.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = server
    target.write_text(kubeconfigs.dump(config))
    target.chmod(0o600)
    return target


ROLES = ("worker", "beat", "watch")
"""The agent's processes in every demo, each serving its own ``/metrics``."""


def metrics_addresses() -> dict[str, str]:
    """A free ``127.0.0.1:<port>`` for each role's ``/metrics``, no two alike."""
    addresses: dict[str, str] = {}
    while len(set(addresses.values())) < len(ROLES):
        addresses = {role: f"127.0.0.1:{free_port()}" for role in ROLES}
    return addresses


def start_agent(stack: Stack, settings: Mapping[str, str], metrics: Mapping[str, str]) -> None:
    """Start a worker, beat and the watcher with ``settings`` (``SYNCFLOW_*``), each serving metrics at
    its address in ``metrics``, and wait until each is up."""
    command = syncflow_command()
    _start_roles(
        stack,
        child_env(settings),
        metrics,
        worker=[*command, "worker", "-c", "2", "-I", PUBLISH_TASKS, "-n", "demo@%h"],
        beat=[*command, "beat", "-s", str(stack.workdir / "beat-schedule")],
        watch=[*command, "watch"],
    )


def start_roles(stack: Stack, mode: str, settings: Mapping[str, str], metrics: Mapping[str, str]) -> None:
    """Start ``syncflow <mode>`` as a worker, beat and watcher with ``settings``, each serving metrics at
    its address in ``metrics``, and wait until each is up."""
    command = [*syncflow_command(), mode, "--role"]
    _start_roles(
        stack,
        child_env(settings),
        metrics,
        worker=[*command, "worker", "--workers", "2"],
        beat=[*command, "beat", "--data-dir", str(stack.workdir / "beat")],
        watch=[*command, "watch"],
    )


def _start_roles(
    stack: Stack,
    env: dict[str, str],
    metrics: Mapping[str, str],
    worker: list[str],
    beat: list[str],
    watch: list[str],
) -> None:
    health = f"127.0.0.1:{free_port()}"
    for role, argv in (("worker", worker), ("beat", beat), ("watch", [*watch, "--health-address", health])):
        stack.start(role, [*argv, "--metrics-address", metrics[role]], env)
    stack.wait(lambda: " ready." in stack.log_text("worker"), START_TIMEOUT, "the worker", ["worker"])
    stack.wait(lambda: "Starting..." in stack.log_text("beat"), START_TIMEOUT, "beat", ["beat"])
    stack.wait(lambda: _healthy(f"http://{health}/healthz"), START_TIMEOUT, "the watcher", ["watch"])
    for role in ROLES:
        url = f"http://{metrics[role]}/metrics"
        stack.wait(functools.partial(_healthy, url), START_TIMEOUT, f"the {role}'s metrics", [role])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def tool_command(name: str) -> str:
    """How to call a command in hints (kubectl, celery): its name when it is on PATH, else the one next
    to this Python."""
    return name if shutil.which(name) else str(Path(sys.executable).parent / name)


def kubectl_command() -> str:
    """How to call kubectl in hints."""
    return tool_command("kubectl")


FLOWER_TASKS_COLUMNS = "name,uuid,state,args,exception,received,runtime,worker"
"""Flower's task list with each task's object keys (its arguments) and a failure's exception."""


def flower_command(redis_url: str, agent: str) -> str:
    """The command that attaches Flower to the demo's agent, on http://127.0.0.1:5555 (login demo:demo:
    Flower refuses to serve its API without one)."""
    return (
        f"SYNCFLOW_REDIS_URL={redis_url} SYNCFLOW_AGENT_NAME={agent} {tool_command('celery')} "
        "-A syncflow.tasks flower --address=127.0.0.1 --port=5555 --basic-auth=demo:demo "
        f"--tasks_columns={FLOWER_TASKS_COLUMNS}"
    )


def console_command(redis_url: str, agent: str, worker_metrics: str) -> str:
    """The command that serves the sync console of the demo's agent on http://127.0.0.1:8080: counts,
    lists, errors and replay (the source and copy sides need the mode's kubeconfig flags too)."""
    return (
        f"SYNCFLOW_REDIS_URL={redis_url} SYNCFLOW_AGENT_NAME={agent} {tool_command('syncflow')} console "
        f"--port 8080 --metrics-url http://{worker_metrics}/metrics --flower-url http://127.0.0.1:5555"
    )
