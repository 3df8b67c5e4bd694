"""Cause tags: a failure may name its cause; every key failing for a cause is retried at once when
the cause goes (``QueueService.replay_cause``). On fakeredis[lua] and on the real Redis."""

from __future__ import annotations

import pytest
from redis import Redis

from syncflow.config import Settings
from syncflow.queue import report
from syncflow.queue.errors import PermanentError, TransientError
from syncflow.queue.execute import Handler, run_keyed
from syncflow.queue.keys import ObjectKey
from syncflow.queue.renewer import LeaseRenewer
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Claim
from tests.queue.conftest import Sent

FORBIDDEN = "forbidden:root:team-a"


def key(name: str) -> ObjectKey:
    return ObjectKey("sync", "certs", "root:team-a", "ns", name)


def failing(error: Exception) -> Handler:
    def handler(_: ObjectKey) -> None:
        raise error

    return handler


def run(service: QueueService, name: str, error: Exception | None) -> str:
    """Add the key and process it once, failing with ``error`` (or succeeding)."""
    service.add(key(name))
    handler = failing(error) if error else (lambda _: None)
    return run_keyed(service, LeaseRenewer(1), handler, str(key(name)), f"token-{name}").state


def index_size(service: QueueService) -> int:
    return int(service.redis.zcard(service.queues["sync"].layout.key("CX")))


def test_the_cause_is_recorded_and_shown(service: QueueService) -> None:
    error = PermanentError("403 Forbidden: claim not accepted", cause=FORBIDDEN)
    assert run(service, "web", error) == "parked"
    failure = service.failure(str(key("web")))
    assert failure is not None and failure.cause == FORBIDDEN
    assert f"cause={FORBIDDEN}" in report.format_failures([failure])
    assert f"cause: {FORBIDDEN}" in report.format_failure(failure)
    assert report.failure_record(failure)["cause"] == FORBIDDEN
    other = ObjectKey("sync", "certs", "root:team-a", "ns", "plain")
    service.add(other)
    run_keyed(service, LeaseRenewer(1), failing(PermanentError("no cause")), str(other), "t")
    plain = service.failure(str(other))
    assert plain is not None and plain.cause == "" and "cause=" not in report.format_failures([plain])


def test_replay_cause_retries_every_key_of_that_cause_in_batches(
    redis: Redis, settings: Settings, sent: Sent
) -> None:
    service = QueueService(redis, settings.model_copy(update={"pump_batch": 3}), sent)
    parked = [f"parked-{i}" for i in range(7)]
    for name in parked:
        assert run(service, name, PermanentError("forbidden", cause=FORBIDDEN)) == "parked"
    assert run(service, "backing-off", TransientError("kcp down", cause=FORBIDDEN)) == "backoff"
    assert run(service, "other", PermanentError("forbidden", cause=FORBIDDEN + "x")) == "parked"
    assert run(service, "other-2", PermanentError("forbidden", cause="unreachable:kcp")) == "parked"
    sent.clear()

    assert service.replay_cause(FORBIDDEN) == 8
    assert sorted(k.name for k, _ in sent) == sorted([*parked, "backing-off"])
    assert sorted(f.key for f in service.parked()) == [str(key("other")), str(key("other-2"))]
    assert service.queues["sync"].claim(key("backing-off"), "new") is Claim.CLAIMED
    assert service.replay_cause(FORBIDDEN) == 0
    assert index_size(service) == 2


def test_success_or_a_failure_without_cause_drops_the_key_from_the_index(service: QueueService) -> None:
    run(service, "a", TransientError("down", cause="unreachable:kcp"))
    run(service, "b", TransientError("down", cause="unreachable:kcp"))
    assert index_size(service) == 2
    service.queues["sync"].redis.zadd(service.queues["sync"].layout.key("W"), {str(key("a")): 0}, xx=True)
    service.queues["sync"].redis.zadd(service.queues["sync"].layout.key("W"), {str(key("b")): 0}, xx=True)
    service.pump()
    assert run_keyed(service, LeaseRenewer(1), lambda _: None, str(key("a")), "ok").state == "done"
    handler = failing(RuntimeError("bug"))
    assert run_keyed(service, LeaseRenewer(1), handler, str(key("b")), "err").state == "backoff"
    assert index_size(service) == 0
    assert service.replay_cause("unreachable:kcp") == 0


@pytest.mark.parametrize("cause", ["", "has space", "x" * 201, "tab\there", "é"])
def test_a_cause_is_a_short_printable_word(cause: str) -> None:
    with pytest.raises(ValueError, match="cause"):
        PermanentError("boom", cause=cause)
    with pytest.raises(ValueError, match="cause"):
        TransientError("boom", cause=cause)
