"""What a resync, status or poll pass holds at once: one page of source objects, and of every copy only
what the pass reads. A pass over every object of a rule must not hold them all: the process keeps the
memory such a peak took (the allocator's high-water mark), so a worker would grow with the rule's
objects."""

from __future__ import annotations

import base64
import gc
import weakref
from collections.abc import Callable
from typing import Any

import orjson

from syncflow.queue.keys import ObjectKey
from syncflow.sync.resync import keys_needing_work, poll_changes, status_keys
from syncflow.sync.rule import Resource, Side, SyncRule
from tests.support.copies import copy_of

WIDGETS = Resource(group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=True)
RULE = SyncRule(
    name="widgets",
    agent="agent",
    source=Side(endpoint="kcp", resource=WIDGETS),
    target=Side(endpoint="service", resource=WIDGETS),
)
PAGES, PER_PAGE = 4, 3


class Listed(dict[str, Any]):
    """A listed object whose lifetime a test can watch."""

    __slots__ = ("__weakref__",)


def source(name: str) -> Listed:
    return Listed(
        metadata={
            "name": name,
            "namespace": "default",
            "annotations": {"kcp.io/cluster": "ws1"},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        },
        status={"ready": True},
    )


def copy(name: str) -> Listed:
    return Listed(copy_of(name), status=Listed(ready=False))


def state_secret(name: str) -> Listed:
    content = base64.b64encode(orjson.dumps({"spec": {"size": name}})).decode()
    return Listed(metadata={"name": f"obj-state-{name}", "namespace": "states"}, data=Listed(k=content))


class Paged:
    """Both endpoints as one, answering each collection ``PER_PAGE`` objects at a time; each page is
    made when it is asked for. When the last page of a list is asked for, it counts the objects of the
    pages before the one just handed out (the lister may still hold that one) that are still alive."""

    def __init__(self) -> None:
        self.handed: list[tuple[int, weakref.ref[Listed]]] = []
        self.alive_at_last_page: dict[str, int] = {}

    def api(self, endpoint: str, cluster: str) -> Any:
        paged = self
        make = source if endpoint == "kcp" else copy

        class Api:
            def get(self, path: str, **query: str) -> dict[str, Any]:
                secrets = path.endswith("/secrets")  # the state Secrets, on the service side
                page = int(query.get("continue") or 0)
                if page == 0:
                    paged.handed.clear()
                if page == PAGES - 1:
                    gc.collect()
                    earlier = [ref for number, ref in paged.handed if number < page - 1]
                    paged.alive_at_last_page["secrets" if secrets else endpoint] = sum(
                        ref() is not None for ref in earlier
                    )
                items = [(state_secret if secrets else make)(f"w-{page}-{i}") for i in range(PER_PAGE)]
                paged.handed += [(page, weakref.ref(obj)) for obj in items]
                paged.handed += [
                    (page, weakref.ref(obj[part]))
                    for obj in items
                    for part in ("status", "data")
                    if isinstance(obj.get(part), Listed)
                ]
                more = str(page + 1) if page < PAGES - 1 else ""
                return {"items": items, "metadata": {"continue": more}}

            get_metadata = get  # whole objects: the most a metadata list can hold

        return Api()

    def everywhere(self, endpoint: str) -> list[Any]:
        return [self.api(endpoint, "")]


def held_at_last_page(run: Callable[[Paged], object]) -> dict[str, int]:
    """How many objects of the earlier pages of each endpoint's list were still alive when its last
    page was asked for."""
    paged = Paged()
    run(paged)
    return paged.alive_at_last_page


def test_a_resync_holds_one_page_of_sources_and_no_copy_it_does_not_read() -> None:
    held = held_at_last_page(lambda paged: keys_needing_work(RULE, paged))
    # the copies' list: only which exist (the rule neither reverts drift nor mutates)
    assert held == {"service": 0, "kcp": 0}


def test_a_resync_holds_a_digest_of_each_state_not_what_the_state_secret_stores() -> None:
    stateful = RULE.model_copy(update={"state_namespace": "states"})

    held = held_at_last_page(lambda paged: keys_needing_work(stateful, paged))

    assert held == {"service": 0, "secrets": 0, "kcp": 0}


def test_a_status_pass_holds_a_digest_of_each_copys_status_and_one_page_of_sources() -> None:
    held = held_at_last_page(lambda paged: status_keys(RULE, paged))
    assert held == {"service": 0, "kcp": 0}


def test_a_poll_holds_only_what_it_hands_on() -> None:
    def everything(keys: set[ObjectKey]) -> set[ObjectKey]:
        return keys  # the queue holds every key: nothing to hand on

    held = held_at_last_page(lambda paged: poll_changes(RULE, paged, everything))
    # every object has its copy, made from the version listed: nothing changed, nothing is held
    assert held == {"service": 0, "kcp": 0}
