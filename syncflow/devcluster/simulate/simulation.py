"""Runs the simulated controllers: object-layer hooks queue keys, one asyncio task reconciles them.

The hooks run inside every stored write or removal (API requests, lifecycle, the simulation's
own writes) and only queue keys; the task takes one key at a time and yields to the event loop
after each, so the API keeps answering while the simulation works.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.simulate.api import Api, api_group
from syncflow.devcluster.simulate.config import SimulationConfig
from syncflow.devcluster.simulate.daemonsets import DaemonSets
from syncflow.devcluster.simulate.deployments import Deployments
from syncflow.devcluster.simulate.endpoints import EndpointsController
from syncflow.devcluster.simulate.gc import GarbageCollector
from syncflow.devcluster.simulate.jobs import Jobs
from syncflow.devcluster.simulate.kubelet import Kubelet
from syncflow.devcluster.simulate.loadbalancers import LoadBalancers
from syncflow.devcluster.simulate.nodes import create_node
from syncflow.devcluster.simulate.owners import OwnerIndex, Ref, controller_of
from syncflow.devcluster.simulate.replicasets import ReplicaSets
from syncflow.devcluster.simulate.statefulsets import StatefulSets
from syncflow.devcluster.simulate.workloads import selects
from syncflow.devcluster.simulate.workqueue import WorkQueue
from syncflow.devcluster.store import Obj
from syncflow.util.logs import log_event

logger = logging.getLogger("syncflow.devcluster.simulate")

# (group, plural) of a workload -> the key of its controller; the kind names its pods' owner.
_WORKLOADS = {
    ("apps", "deployments"): "deployment",
    ("apps", "replicasets"): "replicaset",
    ("apps", "statefulsets"): "statefulset",
    ("apps", "daemonsets"): "daemonset",
    ("batch", "jobs"): "job",
}
_CONTROLLER_KINDS = {
    ("apps", "Deployment"): "deployment",
    ("apps", "ReplicaSet"): "replicaset",
    ("apps", "StatefulSet"): "statefulset",
    ("apps", "DaemonSet"): "daemonset",
    ("batch", "Job"): "job",
}


class Simulation:
    """The simulated controllers of one logical cluster."""

    def __init__(
        self, objects: Objects, registry: Registry, config: SimulationConfig, cluster: str = ""
    ) -> None:
        self.objects = objects
        self.config = config
        self.cluster = cluster
        self.api = Api(objects, registry)
        self.index = OwnerIndex()
        self.queue = WorkQueue(config.queue_limit)
        self.gc = GarbageCollector(self.api, self.index, self.queue.add, config.writes_per_pass)
        self.load_balancers = LoadBalancers(
            self.api, config.load_balancer_pool(), config.load_balancer_delay, self._clock, self._later
        )
        endpoints = EndpointsController(self.api, self.index)
        self._handlers: dict[str, Callable[..., None]] = {
            "pod": Kubelet(self.api, config.node_name).reconcile,
            "replicaset": ReplicaSets(self.api, self.index, config).reconcile,
            "deployment": Deployments(self.api, self.index, config).reconcile,
            "statefulset": StatefulSets(self.api, self.index, config).reconcile,
            "daemonset": DaemonSets(self.api, self.index, config).reconcile,
            "job": Jobs(self.api, self.index, config).reconcile,
            "service": self.load_balancers.reconcile,
            "endpoints": endpoints.reconcile,
            "gc-owner": self.gc.owner,
            "gc-dependent": self.gc.dependent,
            "gc-absent": self.gc.absent,
        }
        self._task: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()

    # ----- lifecycle -----

    def start(self) -> None:
        """Index what exists, hook into the object layer, create the node and start working."""
        for rtype in self.api.registry.types(self.cluster):
            for obj in self.api.items(self.cluster, rtype.group, rtype.plural, None):
                self._observe(Target(self.cluster, rtype, rtype.versions[0]), obj, None)
        self.objects.on_write.append(self._on_write)
        self.objects.on_remove.append(self._on_remove)
        create_node(self.api, self.cluster, self.config.node_name)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="devcluster-simulation")
        log_event(logger, "simulate.started", node=self.config.node_name)

    async def stop(self) -> None:
        """Unhook and stop working."""
        self.objects.on_write.remove(self._on_write)
        self.objects.on_remove.remove(self._on_remove)
        for timer in self._timers:
            timer.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            key = await self.queue.get()
            assert isinstance(key, tuple)
            try:
                self._handlers[key[0]](*key[1:])
            except Exception as exc:  # one broken object must not stop the simulation
                log_event(
                    logger, "simulate.reconcile.failed", level=logging.ERROR, key=repr(key), error=repr(exc)
                )
            await asyncio.sleep(0)

    # ----- routing events to keys -----

    def _clock(self) -> float:
        return asyncio.get_running_loop().time()

    def _later(self, delay: float, cluster: str, namespace: str, name: str) -> None:
        key = ("service", cluster, namespace, name)

        def fire() -> None:
            self._timers.discard(timer)
            self.queue.add(key)

        timer = asyncio.get_running_loop().call_later(delay, fire)
        self._timers.add(timer)

    def _enqueue(self, *key: Any) -> None:
        self.queue.add(key)

    def _on_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        if t.cluster == self.cluster:
            self._observe(t, new, old)

    def _on_remove(self, t: Target, obj: Obj) -> None:
        if t.cluster != self.cluster:
            return
        meta = obj["metadata"]
        ref: Ref = (t.rtype.group, t.rtype.plural, meta.get("namespace", ""), meta["name"])
        self.index.update(t.cluster, ref, None, obj)
        self.gc.observed_remove(t.cluster, obj)
        self._route(t, ref, obj, None)

    def _observe(self, t: Target, new: Obj, old: Obj | None) -> None:
        meta = new["metadata"]
        ref: Ref = (t.rtype.group, t.rtype.plural, meta.get("namespace", ""), meta["name"])
        self.index.update(t.cluster, ref, new, old)
        self.gc.observed_write(t.cluster, ref, new, old)
        self._route(t, ref, new, old)

    def _route(self, t: Target, ref: Ref, obj: Obj, old: Obj | None) -> None:
        """Queue the controllers a change concerns (``obj`` is the new or the removed state)."""
        group, plural, namespace, name = ref
        cluster = t.cluster
        workload = _WORKLOADS.get((group, plural))
        if workload is not None:
            self._enqueue(workload, cluster, namespace, name)
        for state in (obj, old):
            owner = controller_of(state)
            if owner is not None:
                kind = _CONTROLLER_KINDS.get(
                    (api_group(str(owner.get("apiVersion", ""))), str(owner.get("kind")))
                )
                if kind is not None:
                    self._enqueue(kind, cluster, namespace, str(owner.get("name")))
        if (group, plural) == ("", "pods"):
            self._enqueue("pod", cluster, namespace, name)
            labels = [(state or {}).get("metadata", {}).get("labels") for state in (obj, old)]
            for service in self.api.items(cluster, "", "services", namespace):
                selector = (service.get("spec") or {}).get("selector")
                if selector and any(selects(selector, lab) for lab in labels):
                    self._enqueue("endpoints", cluster, namespace, service["metadata"]["name"])
        elif (group, plural) == ("", "services"):
            self._enqueue("service", cluster, namespace, name)
            self._enqueue("endpoints", cluster, namespace, name)
        elif (group, plural) == ("", "nodes"):
            for ds in self.api.items(cluster, "apps", "daemonsets", None):
                self._enqueue("daemonset", cluster, ds["metadata"]["namespace"], ds["metadata"]["name"])
