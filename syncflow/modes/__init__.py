"""Sync modes: each turns its own API objects into sync rules for the engine (docs/architecture.md §1, §15).

A mode package ``syncflow.modes.<mode>`` has a ``mode`` module whose ``MODE`` object implements
``syncflow.app.mode.Mode`` (the engine's task bodies with the mode's endpoints, ``syncflow watch``,
its beat entries...), a ``context`` module with what its processes build once, and a ``tasks`` module
with its control-plane tasks. ``MODE`` is registered by import path in ``syncflow.app.modes.MODES``,
so nothing below imports a mode.

May import ``syncflow.tasks`` (to register tasks), ``runtime``, ``bootstrap``, the engine and everything
below; never ``cli``, ``demo`` or ``devcluster``. One mode never imports another (``base`` is shared).
"""
