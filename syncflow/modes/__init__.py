"""Sync modes: each turns its own API objects into sync rules for the engine (docs/architecture.md §1, §15).

A mode package ``syncflow.modes.<mode>`` has a ``context`` module with ``rule_worker(settings,
redis, budget)`` (the engine's task bodies with the mode's endpoints, built once per process) and
``watch_process(settings)`` (``syncflow watch``), and a ``tasks`` module with its control-plane tasks.
The configured mode is found by name (``syncflow.app.modes``), so nothing below imports a mode.

May import ``syncflow.tasks`` (to register tasks), ``runtime``, ``bootstrap``, the engine and everything
below; never ``cli``, ``demo`` or ``devcluster``. One mode never imports another (``base`` is shared).
"""
