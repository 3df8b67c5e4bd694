"""What a config's Conflicts and Parked conditions say, read from the parked keys of its rules."""

from __future__ import annotations

import json

import fakeredis
import pytest

from syncflow.config import load_settings
from syncflow.queue.keys import ObjectKey
from syncflow.queue.registry import register_verb
from syncflow.queue.service import QueueService
from syncflow.queue.workqueue import Outcome
from syncflow.sync import trouble
from syncflow.sync.keys import STATUS, SYNC
from syncflow.sync.ownership import FOREIGN

register_verb(SYNC, "sync", names_rule=True)
register_verb(STATUS, "status", names_rule=True)


@pytest.fixture
def service() -> QueueService:
    return QueueService(
        fakeredis.FakeRedis(), load_settings(agent_name="agent"), lambda messages, together=False: None
    )


def park(service: QueueService, key: ObjectKey, cause: str = "") -> None:
    service.add(key)
    queue = service.queue_for(key)
    assert queue.take(key, "t").claim.value == "claimed"
    error = json.dumps({"type": "PermanentError", "error": "no", "cause": cause})
    assert queue.done(key, "t", Outcome.PERMANENT, error=error, cause=cause).state == "parked"


def test_parked_objects_count_once_per_object_and_conflicts_apart(service: QueueService) -> None:
    park(service, ObjectKey(SYNC, "cms", "ws", "a", "taken"), FOREIGN)
    park(service, ObjectKey(SYNC, "cms", "ws", "a", "broken"))
    park(service, ObjectKey(STATUS, "cms", "ws", "a", "broken"))  # the same object: counted once
    park(service, ObjectKey(SYNC, "other", "ws", "a", "elsewhere"))
    found = trouble.troubles(service, ["cms"])
    assert set(found) == {"cms"}
    mine = found["cms"]
    assert mine.conflicts == {("ws", "a", "taken")} and mine.parked == {("ws", "a", "broken")}
    conditions = {c["type"]: c for c in trouble.conditions(None, mine, 3)}
    assert conditions["Conflicts"]["status"] == "True" and conditions["Parked"]["status"] == "True"
    assert (
        conditions["Conflicts"]["message"].startswith("1 object not synced")
        and "a/taken" in (conditions["Conflicts"]["message"])
    )
    assert conditions["Parked"]["observedGeneration"] == 3


def test_nothing_parked_is_reported_as_such_and_keeps_other_conditions(service: QueueService) -> None:
    ready = {"type": "Ready", "status": "True", "reason": "Merged", "message": "", "lastTransitionTime": "t"}
    updated = trouble.conditions([ready], trouble.total(trouble.troubles(service, ["cms"]), ["cms"]))
    by_type = {c["type"]: c for c in updated}
    assert by_type["Ready"] == ready
    assert (by_type["Conflicts"]["status"], by_type["Parked"]["status"]) == ("False", "False")


def test_a_flood_of_parked_keys_is_read_up_to_the_limit(
    service: QueueService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trouble, "SCAN_LIMIT", 5)
    for index in range(8):
        park(service, ObjectKey(SYNC, "cms", "ws", "a", f"o{index}"))
    mine = trouble.troubles(service, ["cms"])["cms"]
    assert mine.capped and len(mine.parked) <= 5
    message = {c["type"]: c for c in trouble.conditions(None, mine)}["Parked"]["message"]
    assert message.startswith("at least ") and message.endswith(", …")
