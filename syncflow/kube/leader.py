"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

A candidate takes the Lease when it is free or when its record has not changed for
``leaseDurationSeconds`` as seen on the candidate's own clock (no clock-skew assumptions). The
leader renews every ``retry_period``; writes carry the resourceVersion read, so a ``409`` means
another candidate won. A leader that cannot renew within ``renew_deadline`` stops leading and
becomes a candidate again; a clean stop releases the Lease so a standby takes over at once.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from syncflow.kube.jsonapi import JsonApi
from syncflow.logs import log_event

logger = logging.getLogger(__name__)


def micro_time(moment: datetime) -> str:
    """A Kubernetes MicroTime: RFC 3339 in UTC with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Campaigns for one Lease and reports when leadership starts and stops."""

    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        *,
        release_on_stop: bool = True,
    ) -> None:
        if not retry_period < renew_deadline < lease_duration:
            raise ValueError("need retry_period < renew_deadline < lease_duration")
        self.api = api
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_stop = release_on_stop
        self.json = JsonApi(api, timeout=(renew_deadline / 2, renew_deadline / 2))
        self._leader = threading.Event()
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self._holder: str | None = None

    @property
    def is_leader(self) -> bool:
        """Whether this candidate holds the Lease now."""
        return self._leader.is_set()

    @property
    def observed_holder(self) -> str | None:
        """The holder seen at the last read of the Lease ("" when free, None before any read)."""
        return self._holder

    def run(
        self, on_started: Callable[[], None], on_stopped: Callable[[], None], stop: threading.Event
    ) -> None:
        """Campaign, lead and renew until ``stop`` is set; the callbacks must return promptly."""
        while not stop.is_set():
            if self._attempt():
                self._leader.set()
                log_event(logger, "leader.started", lease=self.name, identity=self.identity)
                on_started()
                self._lead(stop)
                self._leader.clear()
                log_event(logger, "leader.stopped", lease=self.name, identity=self.identity)
                on_stopped()
            else:
                stop.wait(self.retry_period)

    def _lead(self, stop: threading.Event) -> None:
        """Renew until stopped (then release) or until renewing fails for ``renew_deadline``."""
        renewed = time.monotonic()
        while not stop.wait(self.retry_period):
            if self._attempt():
                renewed = time.monotonic()
            elif time.monotonic() - renewed >= self.renew_deadline:
                log_event(
                    logger, "leader.lost", level=logging.WARNING, lease=self.name, identity=self.identity
                )
                return
        if self.release_on_stop:
            self._release()

    def _attempt(self) -> bool:
        """Try once to acquire or renew; True if we hold the Lease afterwards."""
        now = datetime.now(UTC)
        try:
            lease = self._get()
            if lease is None:
                self._holder = ""
                self.json.create(self._collection(), self._lease(self._spec({}, now, taking=True)))
                return True
            spec = lease.get("spec") or {}
            holder = self._holder = spec.get("holderIdentity") or ""
            if holder and holder != self.identity and not self._expired(lease):
                return False
            lease["spec"] = self._spec(spec, now, taking=holder != self.identity)
            self.json.replace(self.path, lease)
            return True
        except Exception as exc:  # unreachable server, 409 from a rival, bad answers: not leading now
            log_event(
                logger,
                "leader.attempt_failed",
                level=logging.DEBUG,
                lease=self.name,
                identity=self.identity,
                error=f"{type(exc).__name__}: {exc}",
            )
            return False

    def _expired(self, lease: dict[str, Any]) -> bool:
        """True when the record has not changed for its lease duration on our clock."""
        spec = lease.get("spec") or {}
        record = (spec.get("holderIdentity"), spec.get("renewTime"), lease["metadata"].get("resourceVersion"))
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()
        duration = spec.get("leaseDurationSeconds") or math.ceil(self.lease_duration)
        return time.monotonic() - self._observed_at >= duration

    def _spec(self, old: dict[str, Any], now: datetime, *, taking: bool) -> dict[str, Any]:
        """Our record; taking over a Lease (not creating it) counts a transition."""
        spec = {
            **old,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": math.ceil(self.lease_duration),
            "renewTime": micro_time(now),
        }
        if taking:
            spec["acquireTime"] = micro_time(now)
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + (1 if old else 0)
        return spec

    def _release(self) -> None:
        """Clear the holder so a standby can take the Lease without waiting for it to expire."""
        try:
            lease = self._get()
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            now = micro_time(datetime.now(UTC))
            lease["spec"] = {
                **lease["spec"],
                "holderIdentity": None,
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
            }
            self.json.replace(self.path, lease)
            log_event(logger, "leader.released", lease=self.name, identity=self.identity)
        except Exception as exc:  # the Lease then simply expires
            log_event(
                logger,
                "leader.release_failed",
                level=logging.WARNING,
                lease=self.name,
                identity=self.identity,
                error=f"{type(exc).__name__}: {exc}",
            )

    def _collection(self) -> str:
        return self.path.rsplit("/", 1)[0]

    def _lease(self, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }

    def _get(self) -> dict[str, Any] | None:
        try:
            return self.json.get(self.path)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
