"""Running a devcluster: bind, write the kubeconfig, tell the user how to reach it, serve until stopped."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from syncflow.devcluster.kubeconfig import kubeconfig, write_kubeconfig
from syncflow.devcluster.server import DevCluster, ServerConfig
from syncflow.devcluster.tls import make_serving_certificate

CONTEXT = "devcluster"


@dataclass(frozen=True)
class RunOptions:
    """Command-line options of ``syncflow devcluster``."""

    host: str = "127.0.0.1"
    port: int = 6443
    kubeconfig: Path = Path("devcluster.kubeconfig")
    token: str | None = None
    tls: bool | None = None  # None: TLS exactly when a token is required
    bookmark_interval: float = 60.0
    watch_history: int = 10_000


async def _serve(options: RunOptions, stop: asyncio.Event) -> None:
    tokens = {options.token: "admin"} if options.token else {}
    cluster = DevCluster(
        ServerConfig(
            tokens=tokens,
            bookmark_interval=options.bookmark_interval,
            watch_history=options.watch_history,
        )
    )
    runner = web.AppRunner(cluster.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    use_tls = options.token is not None if options.tls is None else options.tls
    certificate = make_serving_certificate(options.host) if use_tls else None
    site = web.TCPSite(
        runner, options.host, options.port, ssl_context=certificate.ssl_context() if certificate else None
    )
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise SystemExit(f"error: cannot listen on {options.host}:{options.port}: {exc.strerror}") from None
    server = site._server
    assert server is not None
    port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    url = f"{'https' if certificate else 'http'}://{options.host}:{port}"
    cluster.config.server_address = f"{options.host}:{port}"
    ca_pem = certificate.ca_pem if certificate else None
    write_kubeconfig(options.kubeconfig, kubeconfig({CONTEXT: url}, options.token, CONTEXT, ca_pem))
    path = options.kubeconfig.resolve()
    print(f"devcluster serving at {url}", flush=True)
    print(f"kubeconfig written to {path}", flush=True)
    print("try:", flush=True)
    print(f"  export KUBECONFIG={path}", flush=True)
    print("  kubectl get namespaces", flush=True)
    print(
        "  kubectl create configmap hello --from-literal=greeting=hi && kubectl get configmaps -w", flush=True
    )
    print("stop with Ctrl-C", flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


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
