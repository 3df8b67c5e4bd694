"""Full garbage collections whose cost does not grow with the store.

CPython runs a full (generation 2) collection each time the objects that survived the younger
collections grow by a quarter of the old ones, and a full collection scans every old object. A
devcluster keeps every stored object, so each full collection scanned the whole store, and its
pause grew with it: 20 ms at the start of a benchmark stack, 340 ms after 13,000 objects, with every
request waiting meanwhile. After each full collection the survivors are now frozen (``gc.freeze``),
so the next one scans only what is newer; the collections come as often as before. Refcounting
still frees a frozen object that is dropped; only a reference cycle among frozen objects would never
be collected, and stored objects (JSON data) form none.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any


def _freeze_after_full(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def freeze_after_full_collections() -> Callable[[], None]:
    """Freeze the survivors of every full collection from now on; returns what stops it."""
    gc.callbacks.append(_freeze_after_full)
    return lambda: gc.callbacks.remove(_freeze_after_full)
