"""Edge mode's control-plane tasks: ``syncflow.edgeconfig`` keeps every EdgeSyncConfig's status and
lifecycle (valid, applied, overridden, objects in conflict or parked; syncflow's finalizer while it
lives, the release of what it selected once deleted), on every config change and every status period
(``syncflow.edge-tick``). Downsync, reported state and the upsync polls are the engine's."""

from __future__ import annotations

from syncflow.modes.edge.context import config_key, edge_context
from syncflow.queue.keys import ObjectKey
from syncflow.queue.layout import CONTROL_QUEUE
from syncflow.tasks import keyed_task, periodic_task, runtime


@keyed_task("edgeconfig", queue=CONTROL_QUEUE)
def edgeconfig(key: ObjectKey) -> None:
    """Write the status of every EdgeSyncConfig in the mailbox (and release what deleted ones selected)."""
    edge_context(runtime.settings, runtime.service.redis, runtime.service.budget).configs.record()


@periodic_task("syncflow.edge-tick")
def tick() -> bool:
    """Beat: refresh the EdgeSyncConfigs' status (objects in conflict or parked come and go)."""
    context = edge_context(runtime.settings, runtime.service.redis, runtime.service.budget)
    return runtime.service.add(config_key(context.mailbox))
