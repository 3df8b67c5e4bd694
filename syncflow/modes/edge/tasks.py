"""Edge mode's control-plane task: ``syncflow.edgeconfig`` records every EdgeSyncConfig's status (valid,
applied, overridden by another config). Downsync, reported state and the upsync polls are the engine's."""

from __future__ import annotations

from syncflow.keys import ObjectKey
from syncflow.modes.edge import status
from syncflow.modes.edge.context import edge_context
from syncflow.queue.layout import CONTROL_QUEUE
from syncflow.tasks import keyed_task, runtime


@keyed_task("edgeconfig", queue=CONTROL_QUEUE)
def edgeconfig(key: ObjectKey) -> None:
    """Write the status of every EdgeSyncConfig in the mailbox."""
    status.record(
        edge_context(runtime.settings, runtime.service.redis, runtime.service.budget).endpoints.mailbox
    )
