"""Where the local copy of a kcp object goes (PublishedResource ``spec.naming``), and sync-label hashes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from syncflow.templating import Struct, TemplateError, compile_template, short_hash
from syncflow.templating.bounds import min_length
from syncflow.util.names import dns1123_label, dns1123_subdomain

DEFAULT_NAMESPACE_TEMPLATE = "{{ .ClusterName }}"
DEFAULT_NAME_TEMPLATE = "{{ .Object.metadata.namespace | sha3short }}-{{ .Object.metadata.name | sha3short }}"

_LEGACY_VARIABLES = (
    "$remoteClusterName",
    "$remoteNamespace",
    "$remoteNamespaceHash",
    "$remoteName",
    "$remoteNameHash",
)
# Longest first, so $remoteNamespaceHash is not read as $remoteNamespace followed by "Hash".
_LEGACY_RE = re.compile("|".join(re.escape(v) for v in sorted(_LEGACY_VARIABLES, key=len, reverse=True)))


def sha1_hex(value: str) -> str:
    """The full SHA-1 hex digest, as in the ``syncagent.kcp.io/remote-object-*-hash`` labels."""
    return hashlib.sha1(value.encode(), usedforsecurity=False).hexdigest()


RENDER_LIMIT = 1024
"""Naming templates stop rendering past this many bytes (a name has at most 253; the rest is room for
whitespace that is trimmed)."""
NAME_MAX, NAMESPACE_MAX = 253, 63


class _Pattern:
    """One ``spec.naming`` value: a Go template when it contains ``{{``, else legacy ``$variable`` text."""

    def __init__(self, field: str, text: str, max_length: int, what: str) -> None:
        self.label = f'spec.naming.{field} "{text}"'
        self.text = text
        try:
            self.template = compile_template(text, limit=RENDER_LIMIT) if "{{" in text else None
        except TemplateError as err:
            raise TemplateError(f"{self.label}: {err}") from err
        least = min_length(self.template.nodes) if self.template else len(_LEGACY_RE.sub("", text))
        if least > max_length:
            raise TemplateError(
                f"{self.label} renders at least {least} characters, "
                f"more than the {max_length} of a valid {what}"
            )

    def render(self, obj: Mapping[str, Any], cluster_name: str, cluster_path: str) -> str:
        if self.template is None:
            return self._legacy(obj, cluster_name)
        data = Struct(Object=obj, ClusterName=cluster_name, ClusterPath=cluster_path)
        try:
            return self.template.render(data).strip()
        except TemplateError as err:
            raise TemplateError(f"{self.label}: {err}") from err

    def _legacy(self, obj: Mapping[str, Any], cluster_name: str) -> str:
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        values = {
            "$remoteClusterName": cluster_name,
            "$remoteNamespace": namespace,
            "$remoteNamespaceHash": short_hash(namespace),
            "$remoteName": name,
            "$remoteNameHash": short_hash(name),
        }
        return _LEGACY_RE.sub(lambda match: values[match.group()], self.text)

    def check(self, value: str, validate: Callable[[str], list[str]], what: str) -> None:
        """Raise if the rendered ``value`` is not a valid ``what``, with kube's reasons."""
        if reasons := validate(value):
            raise TemplateError(f'{self.label} produced "{value}", not a valid {what}: {"; ".join(reasons)}')


class NamingRule:
    """``spec.naming`` of a PublishedResource; empty values take api-syncagent's defaults.

    Templates are compiled here, so a bad rule raises :class:`TemplateError` before any object is synced.
    """

    def __init__(self, namespace: str | None = None, name: str | None = None) -> None:
        self.namespace = _Pattern(
            "namespace", namespace or DEFAULT_NAMESPACE_TEMPLATE, NAMESPACE_MAX, "namespace"
        )
        self.name = _Pattern("name", name or DEFAULT_NAME_TEMPLATE, NAME_MAX, "object name")

    def render(
        self, obj: Mapping[str, Any], cluster_name: str, cluster_path: str, *, local_namespaced: bool = True
    ) -> tuple[str, str]:
        """(namespace, name) of the local copy of kcp object ``obj``; namespace "" when cluster-scoped."""
        name = self.name.render(obj, cluster_name, cluster_path)
        self.name.check(name, dns1123_subdomain, "object name (DNS-1123 subdomain)")
        if not local_namespaced:
            return "", name
        namespace = self.namespace.render(obj, cluster_name, cluster_path)
        self.namespace.check(namespace, dns1123_label, "namespace (DNS-1123 label)")
        return namespace, name
