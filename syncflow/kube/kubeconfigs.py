"""Kubeconfigs held in API objects (e.g. a Cluster's ``spec.kubeconfig``): checked, made into clients,
never quoted.

Such a kubeconfig is a credential written by an API user, and every worker turns it into a client, so
it may only hold inline data: no file paths (the worker's files are not the user's), no ``exec`` or
``auth-provider`` plugins (the worker would run the user's programs). Every error names the field
that is wrong and never shows a value, so messages are safe to log, to return in a status and to
keep with a parked key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import yaml
from kubernetes import client, config

from syncflow.kube.clients import RETRIES, KubeconfigError

CLUSTER_FIELDS = frozenset(
    {
        "server",
        "certificate-authority-data",
        "insecure-skip-tls-verify",
        "tls-server-name",
        "proxy-url",
        "disable-compression",
        "extensions",
    }
)
USER_FIELDS = frozenset(
    {"token", "client-certificate-data", "client-key-data", "username", "password", "extensions"}
)
FILE_AND_PLUGIN_FIELDS = frozenset(
    {
        "certificate-authority",
        "client-certificate",
        "client-key",
        "tokenFile",
        "exec",
        "auth-provider",
        "as",
        "as-uid",
        "as-groups",
        "as-user-extra",
    }
)
"""Fields refused by name; other unknown keys are only counted (a key might be a mistyped secret)."""
MAX_SIZE = 64 * 1024
"""Bytes a kubeconfig may have. One with inline certificates is a few KB (a CA, a client certificate
and its key are 1-3 KB each in base64); 64 KiB leaves room for chains and extensions and bounds what
every worker parses for any user who can write a Cluster."""
MAX_DEPTH = 20
"""Levels of nesting a kubeconfig may have; its own structure needs 7 (the document, clusters, an
entry, the cluster, its extensions, one extension, its value). Composing YAML is recursive, so deeper
documents are refused while they are parsed, before they are composed."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML has it: parsing a hostile document up to the depth limit then takes
well under a millisecond (the pure-Python scanner tracks every open bracket of a long line)."""


def fingerprint(text: str) -> str:
    """A digest that changes whenever the kubeconfig does (safe to keep and compare; never to log)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _named(config: dict[str, Any], section: str, name: Any) -> dict[str, Any]:
    for entry in config.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            found = entry.get(section[:-1])
            if isinstance(found, dict):
                return found
    raise KubeconfigError(f"the current context names a {section[:-1]} that {section} does not define")


def _where(mark: Any) -> str:
    """Where a YAML mark (pure-Python or libyaml's, or None) points, as " (line L, column C)"."""
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _bounded(events: Iterable[yaml.Event]) -> None:
    """Refuse a YAML stream nested deeper than ``MAX_DEPTH`` or with aliases (each alias repeats a
    whole subtree), stopping at the first such event."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise KubeconfigError(f"uses YAML aliases{_where(event.start_mark)}: write every value out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise KubeconfigError(f"nested deeper than {MAX_DEPTH} levels{_where(event.start_mark)}")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _document(text: str) -> Any:
    """``text`` as one YAML document, within the size and nesting limits."""
    if len(text.encode(errors="surrogatepass")) > MAX_SIZE:
        raise KubeconfigError(f"longer than {MAX_SIZE} bytes")
    try:
        _bounded(yaml.parse(text, Loader=_LOADER))
        return yaml.load(text, Loader=_LOADER)
    except KubeconfigError:
        raise
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"not valid YAML{_where(getattr(exc, 'problem_mark', None))}") from None
    except ValueError:  # a value its tag refuses (an integer of 5000 digits, the 45th of a month)
        raise KubeconfigError("not valid YAML (a value that cannot be read)") from None


def checked(text: str) -> dict[str, Any]:
    """The kubeconfig's current context, cluster and user, if they use only inline data."""
    loaded = _document(text)
    if not isinstance(loaded, dict):
        raise KubeconfigError("not a kubeconfig: want a mapping with clusters, users and contexts")
    current = loaded.get("current-context")
    if not current:
        raise KubeconfigError("current-context is not set")
    context = _named(loaded, "contexts", current)
    cluster = _named(loaded, "clusters", context.get("cluster"))
    user = _named(loaded, "users", context.get("user")) if context.get("user") else {}
    for what, fields, allowed in (("cluster", cluster, CLUSTER_FIELDS), ("user", user, USER_FIELDS)):
        refused = sorted(str(f) for f in fields if f in FILE_AND_PLUGIN_FIELDS)
        unknown = sum(1 for f in fields if f not in allowed and f not in FILE_AND_PLUGIN_FIELDS)
        if refused or unknown:
            named = refused + ([f"{unknown} unknown field(s)"] if unknown else [])
            raise KubeconfigError(
                f"the {what} uses {', '.join(named)}: only inline data is accepted "
                f"({', '.join(sorted(allowed - {'extensions'}))})"
            )
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        raise KubeconfigError("the cluster's server is not an http(s) URL")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "current",
        "contexts": [{"name": "current", "context": {"cluster": "cluster", "user": "user"}}],
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": "user", "user": user}],
    }


def inline_client(text: str) -> client.ApiClient:
    """A new ApiClient for a kubeconfig held in an API object; ``KubeconfigError`` names what is wrong."""
    kubeconfig = checked(text)
    configuration = type.__call__(client.Configuration)
    try:
        config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            kubeconfig, client_configuration=configuration, persist_config=False
        )
    except Exception as exc:  # the loader's messages may quote the kubeconfig: only its type is kept
        raise KubeconfigError(f"cannot be loaded ({type(exc).__name__})") from None
    configuration.retries = RETRIES
    return client.ApiClient(configuration=configuration)
