"""``syncflow status``: the console's views as kubectl-style tables, JSON or YAML."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import yaml
from pydantic import BaseModel

from syncflow.console.models import STATES, GroupCounts, ObjectDetail, ObjectPage, Overview


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns three spaces apart, as kubectl prints them."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _age(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "<none>"
    seconds = abs((now - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _why(error: str) -> str:
    return f" ({error})" if error else ""


def _groups(title: str, groups: Sequence[GroupCounts]) -> list[list[str]]:
    return [[title, *(s.upper() for s in STATES)]] + [
        [g.name, *(str(getattr(g, s)) for s in STATES)] for g in groups
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}s"


def _rules(o: Overview) -> list[list[str]]:
    """The rules' counts and each rule's sync latency."""
    header, *rows = _groups("RULE", o.rules)
    return [[*header, "P50", "P99"]] + [
        [*row, _seconds(latency.p50), _seconds(latency.p99)]
        if (latency := o.latency.of_rule(row[0]))
        else [*row, "-", "-"]
        for row in rows
    ]


def overview_table(o: Overview) -> str:
    """Rules, workspaces, queues and the agent's processes."""
    latency = (
        "unknown" if o.latency.p50 is None else f"p50 {o.latency.p50:.3f}s p99 {(o.latency.p99 or 0):.3f}s"
    )
    blocks = [
        columns(_rules(o)) if o.rules else "no keys",
        columns(_groups("WORKSPACE", o.workspaces)) if o.workspaces else "",
        columns(
            [["QUEUE", "PENDING", "OLDEST"]]
            + [
                [
                    q.queue,
                    str(q.depth),
                    "-" if q.oldest_pending_seconds is None else f"{q.oldest_pending_seconds:.1f}s",
                ]
                for q in o.queues
            ]
        ),
        "\n".join(
            (
                f"leader: {o.leader.holder or 'unknown'}{_why(o.leader.error)}",
                f"workers: {', '.join(o.workers.live) or 'none answered'}{_why(o.workers.error)}",
                f"sync latency: {latency}{_why(o.latency.error)}"
                + (" (counts partial)" if o.partial else ""),
            )
        ),
    ]
    return "\n\n".join(block for block in blocks if block)


def objects_table(page: ObjectPage, now: datetime | None = None) -> str:
    """One row per key."""
    now = now or datetime.now(UTC)
    if not page.items:
        return "no objects"
    rows = [["KEY", "STATE", "AGE", "ATTEMPTS", "CAUSE"]] + [
        [r.key, r.state, _age(r.since, now), str(r.attempts), r.cause or "<none>"] for r in page.items
    ]
    return columns(rows)


def detail_text(d: ObjectDetail) -> str:
    """One key's state, history and last error, as ``kubectl describe`` lists fields."""
    h = d.history
    fields = [
        ("Key", d.row.key),
        ("State", d.row.state),
        ("Queue", d.row.queue),
        ("Attempts", f"{h.attempts} (strikes {h.strikes})"),
        ("Last synced", str(h.last_synced or "<none>")),
        ("First failure", str(h.first_failure or "<none>")),
        ("Parked at", str(h.parked_at or "<none>")),
    ]
    if h.last_error is not None:
        e = h.last_error
        status = f"{e.status} {e.reason}".strip() if e.status is not None else e.type
        message = e.message if e.message.startswith(status) else f"{status}: {e.message}"
        fields += [("Last error", message), ("Cause", e.cause or "<none>")]
    if d.flower_url:
        fields.append(("Flower", d.flower_url))
    width = max(len(name) for name, _ in fields) + 2
    return "\n".join(f"{name + ':':<{width}}{value}" for name, value in fields)


def dump(model: BaseModel, output: str) -> str:
    """A model as JSON or YAML, with the API's field names."""
    data = model.model_dump(mode="json", by_alias=True)
    return json.dumps(data, indent=2) if output == "json" else yaml.safe_dump(data, sort_keys=False).rstrip()
