"""What a CRD needs besides its schema: group, version, names, scope and printer columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel


@dataclass(frozen=True)
class APIType:
    """A served API type: its root model and the CRD facts the model cannot express."""

    model: type[BaseModel]
    group: str
    version: str
    kind: str
    plural: str
    scope: Literal["Cluster", "Namespaced"]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[dict[str, Any], ...] = ()
    status_subresource: bool = True

    @property
    def api_version(self) -> str:
        """``<group>/<version>``."""
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        """``<plural>.<group>``, the CustomResourceDefinition's name."""
        return f"{self.plural}.{self.group}"
