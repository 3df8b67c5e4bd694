"""Deep copies of JSON values (Kubernetes objects and the parts of them syncflow edits)."""

from __future__ import annotations

import copy
from typing import TypeVar, cast

import orjson

J = TypeVar("J")


def deep_copy(value: J) -> J:
    """A deep copy of a JSON value (dicts, lists, strings, numbers, booleans, None): an orjson round
    trip, several times faster than ``copy.deepcopy`` and exact for such data; a value orjson refuses
    (an integer beyond 64 bits, a key that is not a string) is copied by ``copy.deepcopy``. Other
    values come back in their JSON form (a tuple as a list, a NaN as None): pass none."""
    try:
        return cast(J, orjson.loads(orjson.dumps(value)))
    except orjson.JSONEncodeError:
        return copy.deepcopy(value)
