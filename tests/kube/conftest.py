"""Fixtures: a real devcluster process, clients built by syncflow.kube, and watches run in threads."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client

from syncflow.kube.clients import load_client
from syncflow.kube.refs import ObjectRef
from syncflow.kube.watch import ResourceWatch
from tests.support.devcluster import DevclusterProcess, start_devcluster

WATCH_HISTORY = 200


@pytest.fixture(scope="session")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    """One devcluster: fast bookmarks and a short watch window, so old versions soon get 410."""
    server = start_devcluster(
        tmp_path_factory.mktemp("kube"),
        "--bookmark-interval",
        "0.2",
        "--watch-history",
        str(WATCH_HISTORY),
    )
    yield server
    server.stop()


@pytest.fixture
def api(devcluster: DevclusterProcess) -> Iterator[client.ApiClient]:
    """A client from the devcluster's kubeconfig."""
    api = load_client(str(devcluster.kubeconfig))
    yield api
    close_client(api)


def close_client(api: client.ApiClient) -> None:
    """Close a client's connection pool."""
    api.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def core(api: client.ApiClient) -> client.CoreV1Api:
    """Typed core/v1 calls, for making changes the watch must see."""
    return client.CoreV1Api(api)


@pytest.fixture
def namespace(core: client.CoreV1Api) -> str:
    """A fresh namespace for one test."""
    name = "w-" + uuid.uuid4().hex[:10]
    core.create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=name)), _request_timeout=(5, 10)
    )
    return name


@dataclass
class Recorder:
    """A WatchHandler that remembers everything it was told."""

    events: list[tuple[str, ObjectRef, str]] = field(default_factory=list)
    resyncs: list[set[ObjectRef]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_event(self, type: str, obj: dict[str, Any], ref: ObjectRef) -> None:
        """Record one event with the object's resourceVersion."""
        with self.lock:
            self.events.append((type, ref, obj["metadata"]["resourceVersion"]))

    def on_resync(self, refs: set[ObjectRef]) -> None:
        """Record one resync."""
        with self.lock:
            self.resyncs.append(set(refs))

    def saw(self, type: str, name: str) -> bool:
        """Whether an event of ``type`` for ``name`` arrived."""
        with self.lock:
            return any(t == type and ref.name == name for t, ref, _ in self.events)

    def touched(self) -> set[str]:
        """Names reported by any event or resync."""
        with self.lock:
            names = {ref.name for _, ref, _ in self.events}
            return names.union(*({ref.name for ref in refs} for refs in self.resyncs))


Runner = Callable[[ResourceWatch], "RunningWatch"]


@dataclass
class RunningWatch:
    """A ResourceWatch running in a thread."""

    watch: ResourceWatch
    stop: threading.Event
    thread: threading.Thread

    def halt(self, timeout: float = 3.0) -> None:
        """Stop the watch and require it to return promptly."""
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"watch {self.watch.name} did not stop within {timeout}s"


@pytest.fixture
def run_watch() -> Iterator[Runner]:
    """Start watches in threads; any still running are stopped at the end of the test."""
    started: list[RunningWatch] = []

    def start(watch: ResourceWatch) -> RunningWatch:
        stop = threading.Event()
        thread = threading.Thread(target=watch.run, args=(stop,), name=watch.name, daemon=True)
        running = RunningWatch(watch, stop, thread)
        started.append(running)
        thread.start()
        return running

    yield start
    for running in started:
        running.halt()


def configmap(name: str, **data: str) -> client.V1ConfigMap:
    """A ConfigMap body."""
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data)
