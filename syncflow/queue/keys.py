"""Object keys: the one argument of every keyed task (docs/architecture.md §4).

Grammar (every part is ASCII, ``/`` separates exactly five parts)::

    key       = verb "/" rule "/" cluster "/" namespace "/" name
    verb      = lower-alpha *( lower-alnum / "-" )          ; e.g. "sync", "status-up"
    rule      = part                                         ; sync rule, e.g. a PublishedResource name
    cluster   = part                                         ; logical cluster name or path ("root:org:ws")
    namespace = "" / part                                    ; empty for cluster-scoped objects
    name      = part
    part      = 1*( any printable ASCII except "/", "%" and space )

Kubernetes forbids ``/`` and ``%`` in object names, so every real object has exactly one key and
``ObjectKey.parse(str(key)) == key`` always holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Self

_VERB = re.compile(r"[a-z][a-z0-9-]*")
_PART = re.compile(r"[!-$&-.0-~]+")  # printable ASCII minus space, "%" and "/"


class InvalidKeyError(ValueError):
    """A string is not a valid object key."""


@dataclass(frozen=True, slots=True, order=True)
class ObjectKey:
    """One unit of work: ``<verb>/<rule>/<cluster>/<namespace>/<name>``."""

    verb: str
    rule: str
    cluster: str
    namespace: str
    name: str

    def __post_init__(self) -> None:
        if not _VERB.fullmatch(self.verb):
            raise InvalidKeyError(f"invalid verb {self.verb!r}: want [a-z][a-z0-9-]*")
        for field in ("rule", "cluster", "name"):
            value = getattr(self, field)
            if not _PART.fullmatch(value):
                raise InvalidKeyError(
                    f"invalid {field} {value!r}: want printable ASCII without '/', '%' or space"
                )
        if self.namespace and not _PART.fullmatch(self.namespace):
            raise InvalidKeyError(f"invalid namespace {self.namespace!r}")

    @classmethod
    def parse(cls, text: str) -> Self:
        """Parse the string form back into a key (raises ``InvalidKeyError`` naming the problem)."""
        parts = text.split("/")
        if len(parts) != 5:
            raise InvalidKeyError(f"invalid key {text!r}: want verb/rule/cluster/namespace/name")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.verb}/{self.rule}/{self.cluster}/{self.namespace}/{self.name}"

    @property
    def task_name(self) -> str:
        """The Celery task that processes this key."""
        return f"syncflow.{self.verb}"
