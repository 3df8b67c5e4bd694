"""Fail fast at start (issue 15): each bad setting ends the process at once with one clear line naming the
flag, exit 1 — never a worker whose every task would fail, never retry noise or a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncflow.cli import main
from syncflow.kube.clients import load_client
from syncflow.kube.jsonapi import JsonApi
from tests.support.devcluster import DevclusterProcess, kubeconfig_for, start_devcluster
from tests.support.waiting import wait_for

REDIS_URL = os.environ.get("SYNCFLOW_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    process = start_devcluster(tmp_path_factory.mktemp("failfast"))
    yield process
    process.stop()


def kubeconfig_at(tmp_path: Path, source: Path, server: str) -> Path:
    return kubeconfig_for(source, tmp_path / f"kc-{abs(hash(server))}", server)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith("SYNCFLOW_")}
    result = CliRunner().invoke(main, list(args), env={**base, **(env or {})}, catch_exceptions=False)
    return result.exit_code, result.output


def one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, f"want one line, got:\n{output}"
    return lines[0]


@pytest.mark.parametrize("command", ["worker", "watch"])
@pytest.mark.integration
def test_a_missing_kubeconfig_file_names_its_flag(command: str, cluster: DevclusterProcess) -> None:
    code, output = run(
        command,
        "--redis-url",
        REDIS_URL,
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--kcp-kubeconfig",
        "/nonexistent/kcp.kubeconfig",
        "--apiexportendpointslice-ref",
        "x",
    )
    assert code == 1
    assert (
        one_line(output)
        == "Error: --kcp-kubeconfig: stat /nonexistent/kcp.kubeconfig: no such file or directory"
    )


@pytest.mark.integration
def test_kcp_kubeconfig_is_required_never_taken_from_the_default(cluster: DevclusterProcess) -> None:
    code, output = run(
        "worker",
        "--redis-url",
        REDIS_URL,
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--apiexportendpointslice-ref",
        "x",
    )
    assert code == 1
    assert "--kcp-kubeconfig is required" in one_line(output)


@pytest.mark.integration
def test_an_unreachable_api_server_is_one_line_per_endpoint(
    cluster: DevclusterProcess, tmp_path: Path
) -> None:
    port = closed_port()
    dead = kubeconfig_at(tmp_path, cluster.kubeconfig, f"http://127.0.0.1:{port}")
    code, output = run(
        "worker",
        "--redis-url",
        REDIS_URL,
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--kcp-kubeconfig",
        str(dead),
        "--apiexportendpointslice-ref",
        "x",
    )
    assert code == 1
    assert (
        one_line(output)
        == f"Error: cannot reach kcp at http://127.0.0.1:{port} (--kcp-kubeconfig): Connection refused"
    )


@pytest.mark.parametrize("mode", ["workload", "edge", "publish"])
@pytest.mark.integration
def test_an_agent_whose_cluster_cannot_be_reached_says_so_in_one_line(
    mode: str, cluster: DevclusterProcess, tmp_path: Path
) -> None:
    """Not a supervisor restarting children that cannot work, with the reason in a log file."""
    port = closed_port()
    dead = kubeconfig_at(tmp_path, cluster.kubeconfig, f"http://127.0.0.1:{port}")
    required = {
        "workload": ["--sync-target-name", "east", "--workspace", "root:org:ws"],
        "edge": ["--workspace", "root:edge:mb"],
        "publish": ["--apiexportendpointslice-ref", "x"],
    }[mode]
    code, output = run(
        mode,
        *required,
        "--redis-url",
        REDIS_URL,
        "--kcp-kubeconfig",
        str(cluster.kubeconfig),
        "--kubeconfig",
        str(dead),
        "--data-dir",
        str(tmp_path / "data"),
    )
    assert code == 1
    assert one_line(output) == (
        f"Error: cannot reach the cluster at http://127.0.0.1:{port} (--kubeconfig): Connection refused"
    )


@pytest.mark.integration
def test_an_unreachable_redis_is_one_line(cluster: DevclusterProcess) -> None:
    port = closed_port()
    code, output = run("beat", "--redis-url", f"redis://:secret@127.0.0.1:{port}/0")
    assert code == 1
    assert (
        one_line(output)
        == f"Error: cannot reach Redis at redis://:***@127.0.0.1:{port}/0: Connection refused"
    )


@pytest.mark.parametrize("scheme", ["amqp", "redis"])
def test_an_unreachable_broker_is_one_line(scheme: str) -> None:
    port = closed_port()
    code, output = run(
        "beat", "--redis-url", REDIS_URL, "--broker-url", f"{scheme}://u:secret@127.0.0.1:{port}/0"
    )
    assert code == 1
    assert (
        one_line(output)
        == f"Error: cannot reach the broker at {scheme}://u:***@127.0.0.1:{port}/0: Connection refused"
    )


def test_a_bad_redis_url_names_the_flag() -> None:
    code, output = run("beat", "--redis-url", "http://not-redis")
    assert code == 1
    assert one_line(output).startswith("Error: --redis-url http://not-redis: ")


def test_a_wrong_log_format_is_a_usage_error() -> None:
    code, output = run("worker", "--log-format", "xml")
    assert code == 2 and "'xml' is not one of 'text', 'json'" in output


@pytest.mark.integration
def test_publish_mode_needs_the_endpoint_slice(cluster: DevclusterProcess) -> None:
    code, output = run(
        "watch",
        "--redis-url",
        REDIS_URL,
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--kcp-kubeconfig",
        str(cluster.kubeconfig),
    )
    assert code == 1
    assert one_line(output) == "Error: --apiexportendpointslice-ref is required in publish mode"


@pytest.fixture(scope="module")
def kcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """A kcp whose root workspace exports ``widgets`` (its endpoint slice has that name)."""
    process = start_devcluster(tmp_path_factory.mktemp("failfast-kcp"), "--kcp")
    JsonApi(load_client(str(process.kubeconfig))).create(
        "/apis/apis.kcp.io/v1alpha1/apiexports", {"metadata": {"name": "widgets"}, "spec": {}}
    )
    yield process
    process.stop()


@pytest.mark.parametrize("command", ["watch", "worker", "publish"])
@pytest.mark.integration
def test_a_wrong_endpoint_slice_is_one_line_and_exit(
    command: str, cluster: DevclusterProcess, kcp: DevclusterProcess, tmp_path: Path
) -> None:
    """api-syncagent exits when the APIExportEndpointSlice does not resolve: no retry loop of tracebacks."""
    code, output = run(
        command,
        "--redis-url",
        REDIS_URL,
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--kcp-kubeconfig",
        str(kcp.kubeconfig),
        "--apiexportendpointslice-ref",
        "no-such-export",
        *(["--data-dir", str(tmp_path / "data")] if command == "publish" else []),
    )
    assert code == 1
    assert one_line(output) == (
        "Error: failed to resolve APIExportEndpointSlice 'no-such-export' in the workspace of "
        "--kcp-kubeconfig (--apiexportendpointslice-ref): 404 Not Found"
    )


@pytest.mark.integration
def test_a_worker_whose_agent_no_watcher_uses_warns(
    cluster: DevclusterProcess, kcp: DevclusterProcess, tmp_path: Path
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SYNCFLOW_")}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "syncflow"),
                "worker",
                "--redis-url",
                REDIS_URL,
                "--agent-name",
                "nobody-runs-me",
                "--kubeconfig",
                str(cluster.kubeconfig),
                "--kcp-kubeconfig",
                str(kcp.kubeconfig),
                "--apiexportendpointslice-ref",
                "widgets",
                "-c",
                "1",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(
            lambda: "preflight.no_watcher" in log.read_text(errors="replace"),
            timeout=30,
            what=lambda: f"the no-watcher warning\n{log.read_text(errors='replace')}",
        )
        assert "lease=default/syncagent.nobody-runs-me" in log.read_text()
    finally:
        os.killpg(process.pid, 9)
        process.wait(timeout=10)


@pytest.mark.integration
def test_a_central_clusters_mode_process_checks_kcp_only(cluster: DevclusterProcess, tmp_path: Path) -> None:
    """It runs next to no one cluster (each Cluster's kubeconfig is in kcp): no --kubeconfig needed."""
    port = closed_port()
    dead = kubeconfig_at(tmp_path, cluster.kubeconfig, f"http://127.0.0.1:{port}")
    env = {"SYNCFLOW_MODE": "clusters", "HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": ""}
    code, output = run("worker", "--redis-url", REDIS_URL, "--kcp-kubeconfig", str(dead), env=env)
    assert code == 1
    assert (
        one_line(output)
        == f"Error: cannot reach kcp at http://127.0.0.1:{port} (--kcp-kubeconfig): Connection refused"
    )
