"""``/metrics`` of one process: its own metrics (or its group's, in multiprocess mode) and the work
queue's gauges, every series labelled with the agent's name."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from threading import Thread
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, CollectorRegistry, start_http_server
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from syncflow.config import Settings
from syncflow.metrics import multiprocess
from syncflow.metrics.queue import QueueCollector
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.metrics")


class AgentLabel(Collector):
    """Adds ``agent="<name>"`` to every sample of the wrapped collectors (several agents may share a
    Prometheus, a namespace and a Redis)."""

    def __init__(self, agent: str, collectors: Sequence[Collector]) -> None:
        self.agent = agent
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            for family in collector.collect():
                labelled = [s._replace(labels={"agent": self.agent, **s.labels}) for s in family.samples]
                family.samples = labelled
                yield family


def registry(settings: Settings) -> CollectorRegistry:
    """What this process serves: its group's files in multiprocess mode, else its own metrics."""
    import syncflow.metrics.instruments  # noqa: F401 - the metrics exist (at zero) from the start

    group = multiprocess.directory()
    own: Collector = MultiProcessCollector(None, path=group) if group else REGISTRY  # type: ignore[no-untyped-call]
    served = CollectorRegistry(auto_describe=False)
    served.register(AgentLabel(settings.agent_name, [own, QueueCollector(settings)]))
    return served


@dataclass
class MetricsServer:
    """A running ``/metrics`` endpoint."""

    server: WSGIServer
    thread: Thread

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        return int(self.server.server_address[1])

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def serve(settings: Settings, role: str) -> MetricsServer | None:
    """Serve ``/metrics`` on ``settings.metrics_address`` in a daemon thread (None when it is empty)."""
    if not settings.metrics_address:
        return None
    host, _, port = settings.metrics_address.rpartition(":")
    server, thread = start_http_server(int(port), addr=host, registry=registry(settings))
    running = MetricsServer(server, thread)
    log_event(logger, "metrics.serving", role=role, address=f"{host}:{running.port}")
    return running
