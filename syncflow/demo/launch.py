"""Starts syncflow's own processes for the demo (devclusters, worker, beat, watcher) and waits for them."""

from __future__ import annotations

import os
import re
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from syncflow.demo.stack import Stack, free_port
from syncflow.kube import kubeconfigs

START_TIMEOUT = 60.0
PUBLISH_TASKS = "syncflow.modes.publish.tasks"
_SERVING = re.compile(r"devcluster (?:\(kcp\) )?serving at (\S+)")


@dataclass(frozen=True)
class Devcluster:
    """A running devcluster: its URL and the kubeconfig it wrote."""

    url: str
    kubeconfig: Path


def syncflow_command() -> list[str]:
    """How to run ``syncflow``: the entry point next to this Python, else through the interpreter."""
    script = Path(sys.executable).parent / "syncflow"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from syncflow.cli import main; main()"]


def child_env(settings: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any ``SYNCFLOW_*`` variable, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCFLOW_")}
    return {**env, **settings}


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


def start_agent(stack: Stack, settings: Mapping[str, str]) -> None:
    """Start a worker, beat and the watcher with ``settings`` (``SYNCFLOW_*``) and wait until each is up."""
    command = syncflow_command()
    _start_roles(
        stack,
        child_env(settings),
        worker=[*command, "worker", "-c", "2", "-I", PUBLISH_TASKS, "-n", "demo@%h"],
        beat=[*command, "beat", "-s", str(stack.workdir / "beat-schedule")],
        watch=[*command, "watch"],
    )


def start_roles(stack: Stack, mode: str, settings: Mapping[str, str]) -> None:
    """Start ``syncflow <mode>`` as a worker, beat and watcher with ``settings`` and wait until each is up."""
    command = [*syncflow_command(), mode, "--role"]
    _start_roles(
        stack,
        child_env(settings),
        worker=[*command, "worker", "--workers", "2"],
        beat=[*command, "beat", "--data-dir", str(stack.workdir / "beat")],
        watch=[*command, "watch"],
    )


def _start_roles(
    stack: Stack, env: dict[str, str], worker: list[str], beat: list[str], watch: list[str]
) -> None:
    stack.start("worker", worker, env)
    stack.start("beat", beat, env)
    health = f"127.0.0.1:{free_port()}"
    stack.start("watch", [*watch, "--health-address", health], env)
    stack.wait(lambda: " ready." in stack.log_text("worker"), START_TIMEOUT, "the worker", ["worker"])
    stack.wait(lambda: "Starting..." in stack.log_text("beat"), START_TIMEOUT, "beat", ["beat"])
    stack.wait(lambda: _healthy(f"http://{health}/healthz"), START_TIMEOUT, "the watcher", ["watch"])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def kubectl_command() -> str:
    """How to call kubectl in hints: ``kubectl`` when it is on PATH, else the one next to this Python."""
    found = shutil.which("kubectl")
    return "kubectl" if found else str(Path(sys.executable).parent / "kubectl")
