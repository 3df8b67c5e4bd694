"""Writes catalogue.json, devcluster's built-in resource types, from the official Python client.

Run after upgrading the ``kubernetes`` client: ``python -m syncflow.devcluster.builtins.generate``.

The client's generated API classes (``AppsV1Api``, ``CoreV1Api``, …) have one method per REST
operation, each with its HTTP method, path and response model. From them come every resource's
group, versions, plural, scope, kind, verbs and subresources (with the kind they take, e.g.
``deployments/scale`` → ``autoscaling/v1 Scale``). The client follows Kubernetes releases, so it
may know resources or versions a given release does not serve by default: the checked-in
``kubectl api-resources -o wide`` listing of a 1.32 cluster selects which group/resources are
served, which version is preferred, and gives the two facts the client lacks, short names and
categories. Only stable versions (``v1``, ``v2``) are served.

Reading the sources (not importing the API classes) keeps this fast and independent of the
client's runtime; the result is a data file, so the server never imports the client.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from syncflow.devcluster.builtins.listing import KUBE_132_LISTING, Row, parse

OUTPUT = Path(__file__).with_name("catalogue.json")

_OPERATION = re.compile(r"\n    def (\w+)\(")
_SERIALIZE = re.compile(r"method='(\w+)',\s*resource_path='([^']+)'")
_RESPONSE = re.compile(r"'20[01]': \"(\w+)\"")
_STABLE = re.compile(r"^v\d+$")
_MODEL_PREFIX = re.compile(r"^[A-Za-z]*?V\d+(?:alpha\d+|beta\d+)?(?=[A-Z])")
_VERB_OF_PREFIX = (
    ("delete_collection_", "deletecollection"),
    ("create_", "create"),
    ("delete_", "delete"),
    ("list_", "list"),
    ("patch_", "patch"),
    ("read_", "get"),
    ("replace_", "update"),
)
_VERB_ORDER = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# kube-apiserver's OpenAPI has no watch path for componentstatuses; the client folds watch into
# every list operation, so this is the one place where the client cannot tell.
_NOT_WATCHABLE = {("", "componentstatuses")}
# Types whose registry keeps metadata.generation (kube's strategies that bump it on spec changes).
_GENERATION_GROUPS = {
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "flowcontrol.apiserver.k8s.io",
}
_GENERATION_CORE = {"replicationcontrollers"}


def _kind(model: str) -> str:
    return _MODEL_PREFIX.sub("", model)


def _operations(source: str) -> list[tuple[str, str, str, str]]:
    """(operation, HTTP method, path, response model) of each public operation in one API module."""
    bodies = dict(zip(_OPERATION.findall(source), _OPERATION.split(source)[2::2], strict=True))
    found = []
    for name, body in bodies.items():
        if name.startswith("_") or name.endswith(("_with_http_info", "_without_preload_content")):
            continue
        serialize = _SERIALIZE.search(bodies.get(f"_{name}_serialize", ""))
        response = _RESPONSE.search(body)
        if serialize:
            found.append(
                (name, serialize.group(1), serialize.group(2), response.group(1) if response else "")
            )
    return found


def _path_parts(path: str) -> tuple[str, str, bool, str, str] | None:
    """(group, version, namespaced, plural, subresource) of a resource path, None for others."""
    match = re.match(
        r"^/(?:api/(v\d\w*)|apis/([^/]+)/([^/]+))(/namespaces/\{namespace\})?/([a-z]+)(?:/\{name\}(?:/(\w+))?)?$",
        path,
    )
    if not match:
        return None
    core_version, group, version, namespaced, plural, sub = match.groups()
    return (group or "", core_version or version, namespaced is not None, plural, sub or "")


def _verb(operation: str) -> str | None:
    return next((verb for prefix, verb in _VERB_OF_PREFIX if operation.startswith(prefix)), None)


def client_resources() -> dict[tuple[str, str], dict[str, Any]]:
    """Every (group, plural) the client knows at stable versions, with its operations."""
    spec = importlib.util.find_spec("kubernetes.client.api")
    assert spec is not None and spec.submodule_search_locations
    resources: dict[tuple[str, str], dict[str, Any]] = {}
    for module in sorted(Path(next(iter(spec.submodule_search_locations))).glob("*_api.py")):
        for operation, _method, path, model in _operations(module.read_text()):
            parts = _path_parts(path)
            verb = _verb(operation)
            if parts is None or verb is None or "_for_all_namespaces" in operation:
                continue
            group, version, namespaced, plural, sub = parts
            if not _STABLE.match(version):
                continue
            entry = resources.setdefault(
                (group, plural),
                {"versions": set(), "namespaced": False, "verbs": set(), "kind": "", "subresources": {}},
            )
            entry["versions"].add(version)
            if sub:
                subresource = entry["subresources"].setdefault(sub, {"verbs": set(), "model": ""})
                subresource["verbs"].add(verb)
                subresource["model"] = subresource["model"] or model
                continue
            entry["namespaced"] = entry["namespaced"] or namespaced
            entry["verbs"].add(verb)
            if model and not entry["kind"] and verb != "list" and model != "V1Status":
                entry["kind"] = _kind(model)
            if verb == "list" and model.endswith("List") and not entry["kind"]:
                entry["kind"] = _kind(model)[: -len("List")]
    return resources


def _subresource_gvk(model: str) -> dict[str, str]:
    """Group/version/kind of a subresource's body, when it is not the parent's kind."""
    known = {
        "V1Scale": ("autoscaling", "v1", "Scale"),
        "V1Eviction": ("policy", "v1", "Eviction"),
        "AuthenticationV1TokenRequest": ("authentication.k8s.io", "v1", "TokenRequest"),
        "V1Binding": ("", "v1", "Binding"),
    }
    if model in known:
        group, version, kind = known[model]
        return {"group": group, "version": version, "kind": kind}
    return {}


def catalogue(rows: list[Row]) -> list[dict[str, Any]]:
    """The catalogue entries of the listing's resources, with everything else from the client."""
    known = client_resources()
    entries = []
    missing = []
    for row in rows:
        found = known.get((row.group, row.name))
        if found is None:
            missing.append(f"{row.api_version} {row.name}")
            continue
        preferred = row.api_version.rpartition("/")[2]
        versions = [preferred, *sorted(v for v in found["versions"] if v != preferred)]
        verbs = set(found["verbs"])
        if "list" in verbs and (row.group, row.name) not in _NOT_WATCHABLE:
            verbs.add("watch")
        subresources = {}
        for sub, info in sorted(found["subresources"].items()):
            served = sorted(info["verbs"] & {"get", "patch", "update", "create"})
            if served:
                gvk = _subresource_gvk(info["model"])
                subresources[sub] = {"verbs": served, **gvk}
        entries.append(
            {
                "group": row.group,
                "versions": versions,
                "kind": found["kind"],
                "plural": row.name,
                "namespaced": found["namespaced"],
                "verbs": [v for v in _VERB_ORDER if v in verbs],
                "shortNames": list(row.short_names),
                "categories": list(row.categories),
                "subresources": subresources,
                "generation": row.group in _GENERATION_GROUPS
                or (row.group == "" and row.name in _GENERATION_CORE),
            }
        )
    if missing:
        raise SystemExit("the client does not know: " + ", ".join(missing))
    return entries


def main() -> None:
    """Write catalogue.json next to this module."""
    entries = catalogue(parse(KUBE_132_LISTING.read_text()))
    by_group: defaultdict[str, int] = defaultdict(int)
    for entry in entries:
        by_group[entry["group"] or "core"] += 1
    OUTPUT.write_text(json.dumps(entries, indent=1) + "\n")
    print(f"wrote {OUTPUT} with {len(entries)} resources in {len(by_group)} groups")


if __name__ == "__main__":
    main()
