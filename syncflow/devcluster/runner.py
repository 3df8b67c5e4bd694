"""Running a devcluster: bind, write the kubeconfig, tell the user how to reach it, serve until stopped."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from syncflow.devcluster.deadlines import DEFAULT_REQUEST_TIMEOUT
from syncflow.devcluster.gcfreeze import freeze_after_full_collections
from syncflow.devcluster.kcp.heartbeat import DEFAULT_THRESHOLD
from syncflow.devcluster.kcp.server import KcpDevCluster
from syncflow.devcluster.kubeconfig import kubeconfig, write_kubeconfig
from syncflow.devcluster.rbac import ADMIN
from syncflow.devcluster.server import DevCluster, ServerConfig
from syncflow.devcluster.simulate.config import SimulationConfig
from syncflow.devcluster.simulate.simulation import Simulation
from syncflow.devcluster.tls import make_serving_certificate

CONTEXT = "devcluster"
KCP_CONTEXT = "root"


def parse_tokens(values: tuple[str, ...]) -> dict[str, str]:
    """``--token`` values (``TOKEN`` for the admin, or ``IDENTITY=TOKEN``) as identity -> token."""
    tokens: dict[str, str] = {}
    for value in values:
        identity, _, token = value.rpartition("=")
        identity = identity or ADMIN
        if not token:
            raise ValueError(f"--token {value!r}: the token is empty")
        if identity in tokens:
            raise ValueError(f"--token: identity {identity!r} is given twice")
        if token in tokens.values():
            raise ValueError(f"--token: the token of {identity!r} is already used by another identity")
        tokens[identity] = token
    return tokens


@dataclass(frozen=True)
class RunOptions:
    """Command-line options of ``syncflow devcluster``."""

    host: str = "127.0.0.1"
    port: int = 6443
    kubeconfig: Path = Path("devcluster.kubeconfig")
    tokens: dict[str, str] = field(default_factory=dict)  # identity -> bearer token
    tls: bool | None = None  # None: TLS exactly when a token is required
    kcp: bool = False
    sync_target_heartbeat_threshold: float = DEFAULT_THRESHOLD  # kcp: seconds until HeartbeatReady=False
    external_url: str | None = None  # the URL to advertise (e.g. behind a proxy); default: the bound one
    bookmark_interval: float = 60.0
    watch_history: int = 10_000
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT  # seconds a non-watch request may take
    simulation: SimulationConfig | None = field(default_factory=SimulationConfig)  # None: --no-simulate
    latency: float = 0.0  # seconds added before every API request (plays a remote API server)


def _listen(host: str, port: int) -> socket.socket:
    """Bind the listening socket first, so the server knows its own URL before it builds any state."""
    try:
        sock = socket.create_server((host, port), reuse_port=False)
    except OSError as exc:
        raise SystemExit(f"error: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


async def _serve(options: RunOptions, stop: asyncio.Event) -> None:
    sock = _listen(options.host, options.port)
    port = sock.getsockname()[1]
    use_tls = bool(options.tokens) if options.tls is None else options.tls
    certificate = make_serving_certificate(options.host) if use_tls else None
    url = f"{'https' if certificate else 'http'}://{options.host}:{port}"
    config = ServerConfig(
        tokens={token: identity for identity, token in options.tokens.items()},
        bookmark_interval=options.bookmark_interval,
        watch_history=options.watch_history,
        request_timeout=options.request_timeout,
        latency=options.latency,
        ca_pem=certificate.ca_pem.decode() if certificate else "",
        server_address=f"{options.host}:{port}",
        external_url=(options.external_url or url).rstrip("/"),
    )
    cluster = (
        KcpDevCluster(config, options.sync_target_heartbeat_threshold) if options.kcp else DevCluster(config)
    )
    # kcp serves no workloads' controllers, so only a plain cluster is simulated.
    simulation = (
        Simulation(cluster.objects, cluster.registry, options.simulation)
        if options.simulation is not None and not options.kcp
        else None
    )
    if simulation is not None:
        simulation.start()
    stop_freezing = freeze_after_full_collections()
    runner = web.AppRunner(cluster.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.SockSite(runner, sock, ssl_context=certificate.ssl_context() if certificate else None)
    await site.start()
    ca_pem = certificate.ca_pem if certificate else None
    contexts, current = (
        ({KCP_CONTEXT: f"{url}/clusters/root"}, KCP_CONTEXT) if options.kcp else ({CONTEXT: url}, CONTEXT)
    )
    token = options.tokens.get(ADMIN)
    write_kubeconfig(options.kubeconfig, kubeconfig(contexts, token, current, ca_pem))
    path = options.kubeconfig.resolve()
    print(f"devcluster {'(kcp) ' if options.kcp else ''}serving at {url}", flush=True)
    print(f"kubeconfig written to {path}", flush=True)
    print("try:", flush=True)
    print(f"  export KUBECONFIG={path}", flush=True)
    for hint in _KCP_HINTS if options.kcp else _PLAIN_HINTS:
        print(f"  {hint}", flush=True)
    print("stop with Ctrl-C", flush=True)
    try:
        await stop.wait()
    finally:
        if simulation is not None:
            await simulation.stop()
        await runner.cleanup()
        stop_freezing()


_PLAIN_HINTS = (
    "kubectl get namespaces",
    "kubectl create configmap hello --from-literal=greeting=hi && kubectl get configmaps -w",
)
_KCP_HINTS = (
    "kubectl get logicalclusters cluster -o yaml",
    'kubectl create -f - <<< \'{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", '
    '"metadata": {"name": "org"}}\'',
    "kubectl get workspaces",
)


def run(options: RunOptions) -> None:
    """Serve until SIGINT or SIGTERM."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await _serve(options, stop)

    asyncio.run(main())
    print("devcluster stopped", file=sys.stderr)
