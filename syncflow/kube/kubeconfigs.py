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

import urllib3
import yaml
from kubernetes import client, config

from syncflow.kube import addresses
from syncflow.kube.clients import RETRIES, KubeconfigError

CLUSTER_FIELDS: dict[str, type] = {
    "server": str,
    "certificate-authority-data": str,
    "insecure-skip-tls-verify": bool,
    "tls-server-name": str,
    "proxy-url": str,
    "disable-compression": bool,
    "extensions": list,
}
"""The fields a cluster may have, each with the type of its value."""
USER_FIELDS: dict[str, type] = {
    "token": str,
    "client-certificate-data": str,
    "client-key-data": str,
    "username": str,
    "password": str,
    "extensions": list,
}
"""The fields a user may have, each with the type of its value."""
WANT = {str: "a string", bool: "true or false", list: "a list"}
URL_FIELDS = {
    "server": ("http", "https"),
    "proxy-url": ("http", "https", "socks4", "socks4a", "socks5", "socks5h"),
}
"""The cluster's URLs, each with the schemes its client takes."""
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


class _QuotedStrings(yaml.SafeDumper):
    """Writes every string double-quoted (numbers and booleans stay plain)."""


_QuotedStrings.add_representer(
    str, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
)


def dump(config: dict[str, Any]) -> str:
    """A kubeconfig as YAML with every string double-quoted: kubectl (Go) reads YAML 1.2, in which an
    unquoted token such as ``12e45678`` is a number, and refuses the file."""
    return yaml.dump(config, Dumper=_QuotedStrings, sort_keys=False)


def fingerprint(text: str) -> str:
    """A digest that changes whenever the kubeconfig does (safe to keep and compare; never to log)."""
    return hashlib.sha256(text.encode()).hexdigest()


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


def _entries(config: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    """The entries of ``section`` (clusters, users or contexts) by name, the first of a name winning;
    ``KubeconfigError`` naming the section or entry that is not ``{name, <kind>}``."""
    kind, entries = section[:-1], config.get(section)
    if entries is None:  # Go writes an empty list as null
        return {}
    if not isinstance(entries, list):
        raise KubeconfigError(f"{section}: want a list of {{name, {kind}}}")
    named: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(entries):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get(kind), dict)
        ):
            raise KubeconfigError(f"{section}[{index}]: want {{name: <string>, {kind}: <mapping>}}")
        named.setdefault(entry["name"], entry[kind])
    return named


def _named(entries: dict[str, dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    if name not in entries:
        raise KubeconfigError(f"the current context names a {kind} that {kind}s does not define")
    return entries[name]


def _check_fields(what: str, fields: dict[Any, Any], allowed: dict[str, type]) -> None:
    """Refuse file and plugin fields, unknown fields and values of the wrong type (naming fields only)."""
    refused = sorted(str(f) for f in fields if f in FILE_AND_PLUGIN_FIELDS)
    unknown = sum(1 for f in fields if f not in allowed and f not in FILE_AND_PLUGIN_FIELDS)
    if refused or unknown:
        named = refused + ([f"{unknown} unknown field(s)"] if unknown else [])
        raise KubeconfigError(
            f"the {what} uses {', '.join(named)}: only inline data is accepted "
            f"({', '.join(sorted(set(allowed) - {'extensions'}))})"
        )
    for field, value in fields.items():
        if not isinstance(value, allowed[field]):
            raise KubeconfigError(f"the {what}'s {field}: want {WANT[allowed[field]]}")


def _check_url(field: str, url: str, allow_link_local: bool) -> None:
    """Refuse a URL of the cluster that its client cannot use, or that names a link-local or cloud
    metadata address (unless ``allow_link_local``), read as urllib3 reads it to connect."""
    try:
        parsed = urllib3.util.parse_url(url)
    except ValueError:
        parsed = None
    if parsed is None or parsed.scheme not in URL_FIELDS[field] or not parsed.host:
        raise KubeconfigError(f"the cluster's {field} is not a URL ({', '.join(URL_FIELDS[field])})")
    if not allow_link_local and addresses.refused(parsed.host):
        raise KubeconfigError(
            f"the cluster's {field} is a link-local or cloud metadata address: {addresses.REFUSED}"
        )


def checked(text: str, *, allow_link_local: bool = False) -> dict[str, Any]:
    """The kubeconfig's current context, cluster and user, if they use only inline data and (unless
    ``allow_link_local``) name no link-local or cloud metadata address."""
    loaded = _document(text)
    if not isinstance(loaded, dict):
        raise KubeconfigError("not a kubeconfig: want a mapping with clusters, users and contexts")
    contexts, clusters, users = (_entries(loaded, s) for s in ("contexts", "clusters", "users"))
    current = loaded.get("current-context")
    if not current:
        raise KubeconfigError("current-context is not set")
    if not isinstance(current, str):
        raise KubeconfigError("current-context: want the name of a context")
    context = _named(contexts, "context", current)
    for field in ("cluster", "user"):
        if not isinstance(context.get(field, ""), str):
            raise KubeconfigError(f"the current context's {field}: want a string")
    cluster = _named(clusters, "cluster", context.get("cluster", ""))
    user = _named(users, "user", context["user"]) if context.get("user") else {}
    _check_fields("cluster", cluster, CLUSTER_FIELDS)
    _check_fields("user", user, USER_FIELDS)
    for field in URL_FIELDS:
        if field == "server" or field in cluster:
            _check_url(field, cluster.get(field, ""), allow_link_local)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "current",
        "contexts": [{"name": "current", "context": {"cluster": "cluster", "user": "user"}}],
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": "user", "user": user}],
    }


def inline_client(text: str, *, allow_link_local: bool = False) -> client.ApiClient:
    """A new ApiClient for a kubeconfig held in an API object; ``KubeconfigError`` names what is wrong.
    Unless ``allow_link_local``, its connections refuse link-local and metadata addresses
    (``RefusedAddressError``)."""
    kubeconfig = checked(text, allow_link_local=allow_link_local)
    configuration = type.__call__(client.Configuration)
    try:
        config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            kubeconfig, client_configuration=configuration, persist_config=False
        )
        configuration.retries = RETRIES
        api = client.ApiClient(configuration=configuration)
    except Exception as exc:  # the loader's messages may quote the kubeconfig: only its type is kept
        raise KubeconfigError(f"cannot be loaded ({type(exc).__name__})") from None
    if not allow_link_local:
        addresses.guard(api.rest_client.pool_manager)
    return api
