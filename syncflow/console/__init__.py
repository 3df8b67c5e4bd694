"""The sync console: an object-level view of one agent's work queue over HTTP (``syncflow console``)
and in the terminal (``syncflow status``) — which objects are synced, pending, running, retrying or
parked, why, and replay.

It reads the queue's Redis structures with bounded work per request (docs/console.md), resolves an
object's source and copy with the engine's own code for the key's rule, and writes nothing but
replays (``QueueService.replay``, ``replay_matching``, ``replay_cause``). It may import the queue, the
engine, the app's mode registry and ``syncflow.tasks``; nothing below the command line imports it.
"""
