"""``cel{path, expression}``: the value at path becomes the result of a CEL expression (cel-python).

Variables as api-syncagent declares them: ``value`` (the current value at path; numbers are doubles,
as gjson's ``Value()`` gives them), ``self`` (the object being mutated) and ``other`` (the other side's
object, or null). Lists and maps in the result are written as JSON lists and objects (api-syncagent
0.7 wrote them as ``{}``, its issue #184, fixed upstream since).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from syncflow.mutation import paths
from syncflow.mutation.base import Context, MutationError, Obj
from syncflow.mutation.gjson import go_value

_ENV = celpy.Environment()


def _plain(value: Any) -> Any:
    """A CEL result as JSON data."""
    if isinstance(value, celtypes.BoolType | bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, celtypes.BytesType | bytes):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, str):
        return str(value)
    if value is None or isinstance(value, celtypes.NullType):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


class CEL:
    """Sets the value at ``path`` from a CEL expression."""

    def __init__(self, path: str, expression: str) -> None:
        self.path = paths.parse(path)
        try:
            self.program = _ENV.program(_ENV.compile(expression))
        except CELParseError as err:
            raise MutationError(
                f"failed to compile CEL expression {expression!r}: {str(err).strip()}"
            ) from None

    def apply(self, obj: Obj, context: Context) -> Obj:
        found, current = paths.get(obj, self.path)
        variables = {
            "value": json_to_cel(go_value(current) if found else None),
            "self": json_to_cel(obj),
            "other": json_to_cel(dict(context.other) if context.other is not None else None),
        }
        try:
            out = self.program.evaluate(variables)
        except CELEvalError as err:
            reason = err.args[0] if err.args else err
            raise MutationError(f"failed to evaluate CEL expression: {reason}") from None
        result: Obj = paths.set_value(obj, self.path, _plain(out))
        return result
