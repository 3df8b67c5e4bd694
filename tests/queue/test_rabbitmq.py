"""Integration: RabbitMQ as Celery's broker (127.0.0.1:5672, guest/guest) while the keyed queue's
state stays in the session's Redis. Each test gets a vhost of its own, made with ``rabbitmqctl`` and
deleted afterwards; where that cannot be done the tests skip: queues of a shared vhost, which other
users of the broker may own, are never touched."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from amqp.exceptions import PreconditionFailed
from kombu import Connection

from syncflow.queue.broker import AmqpBroker
from syncflow.queue.keys import ObjectKey
from syncflow.tasks import create_app
from tests.queue import handlers  # noqa: F401  (registers the test verbs in this process too)
from tests.queue.live import Live, assert_never_overlaps
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

HOST, PORT = "127.0.0.1", 5672
CTL_TIMEOUT = 60


def _answers() -> bool:
    try:
        with socket.create_connection((HOST, PORT), timeout=1):
            return True
    except OSError:
        return False


def _ctl(*args: str) -> bool:
    """Run ``rabbitmqctl``; False when it cannot (not installed, not allowed)."""
    if shutil.which("rabbitmqctl") is None:
        return False
    try:
        done = subprocess.run(["rabbitmqctl", *args], capture_output=True, timeout=CTL_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@pytest.fixture
def amqp_url() -> Iterator[str]:
    """The broker URL of a vhost of this test's own (or of the default vhost, cleaned afterwards)."""
    if not _answers():
        pytest.skip(f"no RabbitMQ answers on {HOST}:{PORT}")
    vhost = f"sf-test-{uuid.uuid4().hex[:10]}"
    if not _ctl("add_vhost", vhost):
        pytest.skip("rabbitmqctl cannot make a vhost of the test's own (a shared vhost is never used)")
    try:
        if not _ctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"):
            pytest.skip(f"rabbitmqctl cannot give guest the test's vhost {vhost}")
        yield f"amqp://guest:guest@{HOST}:{PORT}/{vhost}"
    finally:
        _ctl("delete_vhost", vhost)


def queue_counts(url: str, name: str) -> tuple[int, int]:
    """Ready messages and consumers of one queue, as RabbitMQ counts them."""
    with Connection(url, connect_timeout=5) as connection, connection.channel() as channel:
        declared = channel.queue_declare(queue=name, passive=True)
        return int(declared.message_count), int(declared.consumer_count)


def worker_running(live: Live, key: ObjectKey) -> str | None:
    """The node name (``first``, ``second``) of the worker running ``key``."""
    replies = create_app(live.settings).control.inspect(timeout=1).active() or {}
    running = (host for host, tasks in replies.items() if any(t["args"] == [str(key)] for t in tasks))
    return next((host.partition("@")[0] for host in running), None)


def workers_answering(live: Live) -> int:
    return len(create_app(live.settings).control.inspect(timeout=1).ping() or {})


def test_a_key_runs_on_a_worker_over_rabbitmq_and_its_message_is_acked(
    make_live: Callable[..., Live], amqp_url: str
) -> None:
    live = make_live(broker_url=amqp_url, broker_quorum_queues=True)
    worker = live.processes.worker()
    key = ObjectKey("rec", "rabbit", "root:ws", "default", "obj")
    live.event(key)
    done = lambda: live.caught_up(key) and live.idle()  # noqa: E731
    wait_for(done, timeout=60, what=lambda: "the run\n" + live.processes.logs())
    assert len(live.runs(key)) == 1
    assert live.service.broker_backlog()["sync"] == 0

    live.processes.kill(worker)
    # Unacked messages go back to the queue when their consumer's connection closes; none does.
    wait_for(lambda: queue_counts(amqp_url, "sync")[1] == 0, timeout=30, what="the consumer to go")
    assert queue_counts(amqp_url, "sync")[0] == 0
    # The queues are quorum queues: RabbitMQ refuses to redeclare one as a classic queue.
    with (
        Connection(amqp_url, connect_timeout=5) as connection,
        connection.channel() as channel,
        pytest.raises(PreconditionFailed, match="x-queue-type"),
    ):
        channel.queue_declare(queue="sync", durable=True, auto_delete=False)


def test_a_worker_killed_mid_task_has_its_message_redelivered_to_another(
    make_live: Callable[..., Live], amqp_url: str
) -> None:
    live = make_live(broker_url=amqp_url)
    live.redis.set(live.data("delay"), 1.5)  # below the 2 s time limit, above the kill's latency
    live.processes.worker("first")
    live.processes.worker("second")
    live.processes.beat()
    logs = live.processes.logs
    wait_for(lambda: workers_answering(live) == 2, timeout=60, what=lambda: "workers\n" + logs())
    key = ObjectKey("rec", "rabbit", "root:ws", "default", "victim")
    live.event(key)

    holder = wait_for(lambda: worker_running(live, key), timeout=30, what="the task to run")
    live.processes.kill(holder)  # SIGKILL to the worker and its pool: RabbitMQ sees the connection go
    killed_at = time.time_ns()
    # RabbitMQ redelivers the unacked message to the other worker while the dead run's lease lives.
    counters = live.service.queues["sync"].counters
    wait_for(lambda: counters().get("busy", 0) >= 1, timeout=30, what="redelivery")
    # The lease expires and the pump requeues the key, which then runs to the end.
    done = lambda: live.caught_up(key) and live.idle()  # noqa: E731
    wait_for(done, timeout=60, what=lambda: "the rerun\n" + live.processes.logs())
    assert_never_overlaps(live, key, killed_at)
    assert counters().get("expired", 0) >= 1
    survivor = live.processes.running["second" if holder == "first" else "first"]
    assert survivor.poll() is None


def test_the_pump_republishes_only_once_rabbitmq_holds_no_message(
    make_live: Callable[..., Live], amqp_url: str
) -> None:
    live = make_live(broker_url=amqp_url)  # no worker: messages wait
    key = ObjectKey("rec", "rabbit", "root:ws", "default", "lost")
    live.service.add(key)
    assert queue_counts(amqp_url, "sync")[0] == 1
    # While a message waits, RabbitMQ cannot say which key it carries: no scan completes.
    totals = live.service.pump(grace=0)
    assert totals is not None and totals.republished == 0
    assert live.service.broker.scan.verified() == 0

    with Connection(amqp_url, connect_timeout=5) as connection, connection.channel() as channel:
        channel.queue_purge("sync")  # the message is lost
    republished = wait_for(
        lambda: (t := live.service.pump(grace=0)) is not None and t.republished, timeout=10
    )
    assert republished == 1
    assert queue_counts(amqp_url, "sync")[0] == 1


def test_counts_reuse_one_connection_and_survive_its_loss(
    make_live: Callable[..., Live], amqp_url: str
) -> None:
    live = make_live(broker_url=amqp_url)
    live.service.add(ObjectKey("rec", "rabbit", "root:ws", "default", "counted"))
    broker = live.service.broker
    assert isinstance(broker, AmqpBroker)
    assert broker.depths(["sync", "status"]) == {"sync": 1, "status": 0}
    kept = broker.connection()
    assert broker.depths(["sync"]) == {"sync": 1} and broker.connection() is kept
    kept.connection.sock.shutdown(socket.SHUT_RDWR)  # the network drops it
    assert broker.depths(["sync"]) == {"sync": 1}
    assert broker.connection() is not kept
