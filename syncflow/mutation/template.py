"""``template{path, template}``: the value at path becomes the rendered template, trimmed, as a string.

As api-syncagent, rendered like Go's ``html/template`` (values are HTML-escaped) with the sprig
functions; the data is ``.Value`` (gjson's Result for the current value: ``.Value.String``),
``.LocalObject`` (the object being mutated) and ``.RemoteObject`` (the other side's, or nil).
"""

from __future__ import annotations

from syncflow.mutation import gjson, paths
from syncflow.mutation.base import Context, MutationError, Obj
from syncflow.templating import Struct, TemplateError, compile_template


class Template:
    """Sets the value at ``path`` from a template."""

    def __init__(self, path: str, template: str) -> None:
        self.path = paths.parse(path)
        try:
            self.template = compile_template(template, html=True)
        except TemplateError as err:
            raise MutationError(f"failed to parse template {template!r}: {err}") from None

    def apply(self, obj: Obj, context: Context) -> Obj:
        data = Struct(
            Value=gjson.result(*paths.get(obj, self.path)),
            LocalObject=obj,
            RemoteObject=context.other,
        )
        try:
            rendered = self.template.render(data).strip()
        except TemplateError as err:
            raise MutationError(f"failed to execute template: {err}") from None
        result: Obj = paths.set_value(obj, self.path, rendered)
        return result
