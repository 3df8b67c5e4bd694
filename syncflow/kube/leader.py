"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

A candidate takes the Lease when it is free or when its record has not changed for
``leaseDurationSeconds`` as seen on the candidate's own clock (no clock-skew assumptions). The
leader renews every ``retry_period``; writes carry the resourceVersion read, so a ``409`` means
another candidate won. A leader that cannot renew within ``renew_deadline`` stops leading and
becomes a candidate again; a clean stop releases the Lease so a standby takes over at once. The
gauge ``leader_election_master_status{name="<Lease>"}`` is 1 while leading, else 0 (client-go's).

Errors reaching the Lease are logged once per distinct error, then at most every
``complain_every`` seconds, and ``healthy`` says whether the Lease was read or written lately. A
missing namespace is created again (the agent keeps its Lease and state there); if the agent may
not create it, ``run`` raises ``LeaderElectionError``.
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
from syncflow.metrics import record as metrics
from syncflow.util.logs import log_event
from syncflow.util.neterrors import describe, network_reason

logger = logging.getLogger(__name__)


_DISTINCT_ERRORS = 16
"""Distinct Lease errors remembered for rate limiting at a time."""


class LeaderElectionError(Exception):
    """Leader election cannot work: e.g. the agent's namespace is gone and it may not create it."""


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
        complain_every: float = 60.0,
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
        self.complain_every = complain_every
        self.last_success: float | None = None
        """``time.monotonic()`` of the last attempt that read (and, if due, wrote) the Lease."""
        self.last_error: str | None = None
        """The last error reaching the Lease, until the next success."""
        self.failures = 0
        """Attempts that failed since the last success."""
        self._complaints: dict[str, tuple[float, int]] = {}  # error -> (last logged, repeats since)

    @property
    def is_leader(self) -> bool:
        """Whether this candidate holds the Lease now."""
        return self._leader.is_set()

    @property
    def healthy(self) -> bool:
        """Whether an attempt on the Lease succeeded within the last lease duration (for readiness)."""
        return self.last_success is not None and time.monotonic() - self.last_success <= self.lease_duration

    @property
    def observed_holder(self) -> str | None:
        """The holder seen at the last read of the Lease ("" when free, None before any read)."""
        return self._holder

    def run(
        self, on_started: Callable[[], None], on_stopped: Callable[[], None], stop: threading.Event
    ) -> None:
        """Campaign, lead and renew until ``stop`` is set; the callbacks must return promptly.
        Raises ``LeaderElectionError`` (after stopping to lead) when election cannot work."""
        metrics.leading(self.name, False)
        while not stop.is_set():
            if self._attempt():
                self._leader.set()
                metrics.leading(self.name, True)
                log_event(logger, "leader.started", lease=self.name, identity=self.identity)
                on_started()
                try:
                    self._lead(stop)
                finally:
                    self._leader.clear()
                    metrics.leading(self.name, False)
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
                self._create(self._lease(self._spec({}, now, taking=True)))
                self._succeeded()
                return True
            spec = lease.get("spec") or {}
            holder = self._holder = spec.get("holderIdentity") or ""
            if holder and holder != self.identity and not self._expired(lease):
                self._succeeded()  # a standby that sees a live leader is fine
                return False
            lease["spec"] = self._spec(spec, now, taking=holder != self.identity)
            self.json.replace(self.path, lease)
            self._succeeded()
            return True
        except LeaderElectionError:
            raise
        except ApiException as exc:
            if exc.status == 409:  # a rival wrote first: normal competition, not an error
                log_event(logger, "leader.conflict", level=logging.DEBUG, lease=self.name)
            else:
                self._failed(describe(exc))
            return False
        except Exception as exc:  # unreachable server, bad answers: not leading now
            self._failed(f"{type(exc).__name__}: {network_reason(exc)}")
            return False

    def _create(self, lease: dict[str, Any]) -> None:
        """Create the Lease, and its namespace first if that is gone."""
        try:
            self.json.create(self._collection(), lease)
        except ApiException as exc:
            if exc.status != 404:
                raise
            self._create_namespace()
            self.json.create(self._collection(), lease)

    def _create_namespace(self) -> None:
        """Create the agent's namespace; it holds the Lease and the sync state Secrets."""
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}
        try:
            self.json.create("/api/v1/namespaces", body)
        except ApiException as exc:
            if exc.status == 409:  # it exists (another candidate made it, or it is being deleted)
                return
            if exc.status == 403:
                message = (
                    f"namespace {self.namespace} of the leader Lease is missing and {self.identity} "
                    f"may not create it: {describe(exc)}"
                )
                log_event(logger, "leader.namespace_forbidden", level=logging.ERROR, error=message)
                self.last_error = message
                raise LeaderElectionError(message) from None
            raise
        log_event(
            logger,
            "leader.namespace_created",
            level=logging.WARNING,
            namespace=self.namespace,
            reason="it was missing; it holds the leader Lease and the sync state",
        )

    def _succeeded(self) -> None:
        self.last_success = time.monotonic()
        if self.last_error is not None:
            log_event(logger, "leader.lease_recovered", lease=self.name, failures=self.failures)
        self.last_error, self.failures = None, 0
        self._complaints.clear()

    def _failed(self, error: str) -> None:
        """Log an error reaching the Lease: each distinct error once, then at most every
        ``complain_every`` seconds (saying how often it recurred meanwhile)."""
        self.failures += 1
        self.last_error = error
        now = time.monotonic()
        logged_at, unreported = self._complaints.get(error, (None, 0))
        if logged_at is not None and now - logged_at < self.complain_every:
            self._complaints[error] = (logged_at, unreported + 1)
            return
        if len(self._complaints) >= _DISTINCT_ERRORS:  # bounded: forget the oldest error
            del self._complaints[next(iter(self._complaints))]
        self._complaints[error] = (now, 0)
        fields: dict[str, Any] = {"lease": f"{self.namespace}/{self.name}", "identity": self.identity}
        if unreported:
            fields["repeated"] = unreported
        log_event(logger, "leader.lease_failed", level=logging.WARNING, error=error, **fields)

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
