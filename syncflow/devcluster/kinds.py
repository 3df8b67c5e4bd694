"""What the API server does per kind on every write: server-set fields, defaults and validation."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from syncflow.devcluster import defaults, schema
from syncflow.devcluster.errors import FieldError
from syncflow.devcluster.resources import ResourceType
from syncflow.util import names

Obj = dict[str, Any]

CRD_GROUP = "apiextensions.k8s.io"
RBAC_GROUP = "rbac.authorization.k8s.io"
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
_WORKLOAD_DEFAULTS: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("apps", "deployments"): defaults.deployment,
    ("apps", "statefulsets"): defaults.stateful_set,
    ("apps", "daemonsets"): defaults.daemon_set,
    ("apps", "replicasets"): defaults.replica_set,
    ("", "replicationcontrollers"): defaults.replication_controller,
    ("batch", "jobs"): defaults.job,
    ("batch", "cronjobs"): defaults.cron_job,
    ("", "podtemplates"): lambda obj: defaults.pod_spec(
        obj.setdefault("template", {}).setdefault("spec", {})
    ),
}


def prepare(rtype: ResourceType, version: str, obj: Obj, old: Obj | None) -> list[FieldError]:
    """Fill server-set fields and defaults of ``obj`` in place; return validation errors."""
    key = (rtype.group, rtype.plural)
    if rtype.custom:
        return _prepare_custom(rtype, version, obj)
    if key == ("", "namespaces"):
        _prepare_namespace(obj, old)
    elif key == ("", "secrets"):
        _prepare_secret(obj)
    elif key == ("", "services"):
        _prepare_service(obj, old)
    elif key in _WORKLOAD_DEFAULTS:
        _WORKLOAD_DEFAULTS[key](obj)
    elif key == ("", "pods"):
        defaults.pod(obj, old)
    elif key == (CRD_GROUP, "customresourcedefinitions"):
        return _prepare_crd(obj, old)
    return []


def name_errors(rtype: ResourceType, name: str) -> list[str]:
    """Problems with an object name, as the type's name rule sees it."""
    if (rtype.group, rtype.plural) == ("", "namespaces"):
        return names.dns1123_label(name)
    if (rtype.group, rtype.plural) == ("", "services"):
        return names.dns1035_label(name)
    if rtype.group == RBAC_GROUP:
        return names.path_segment_name(name)
    return names.dns1123_subdomain(name)


def _prepare_custom(rtype: ResourceType, version: str, obj: Obj) -> list[FieldError]:
    body_schema = rtype.schemas.get(version) or {}
    if not body_schema:
        return []
    rest = {k: v for k, v in obj.items() if k != "metadata"}
    body = schema.prune(schema.apply_defaults(rest, body_schema), body_schema)
    errors = schema.validate(body, body_schema)
    meta = obj["metadata"]
    obj.clear()
    obj.update(body)
    obj["metadata"] = meta
    return errors


def _prepare_namespace(obj: Obj, old: Obj | None) -> None:
    meta = obj["metadata"]
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    if old is None:
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}


def _prepare_secret(obj: Obj) -> None:
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = obj.setdefault("data", {}) or {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _prepare_service(obj: Obj, old: Obj | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    if old is None:
        obj["status"] = {"loadBalancer": {}}
    if spec["type"] == "ExternalName":
        return
    spec.setdefault("internalTrafficPolicy", "Cluster")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


def _prepare_crd(obj: Obj, old: Obj | None) -> list[FieldError]:
    errors = crd_errors(obj)
    if errors:
        return errors
    if old is not None:
        errors += _crd_immutable_errors(obj, old)
    spec = obj["spec"]
    names_ = spec["names"]
    accepted = {
        **names_,
        "singular": names_.get("singular") or names_["kind"].lower(),
        "listKind": names_.get("listKind") or names_["kind"] + "List",
    }
    names_.update({"singular": accepted["singular"], "listKind": accepted["listKind"]})
    spec.setdefault("scope", "Namespaced")
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    stored = list((old or {}).get("status", {}).get("storedVersions") or [])
    if storage not in stored:
        stored.append(storage)
    now = obj["metadata"]["creationTimestamp"]
    obj["status"] = {
        "acceptedNames": accepted,
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "reason": "NoConflicts",
                "message": "no conflicts found",
                "lastTransitionTime": now,
            },
            {
                "type": "Established",
                "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
                "lastTransitionTime": now,
            },
        ],
        "storedVersions": stored,
    }
    return errors


def crd_errors(crd: Obj) -> list[FieldError]:
    """Validation of a CustomResourceDefinition, with kube-apiserver's field paths."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", "FieldValueRequired", "Required value")]
    errors: list[FieldError] = []
    group = spec.get("group") or ""
    names_: dict[str, Any] = spec["names"] if isinstance(spec.get("names"), dict) else {}
    plural = names_.get("plural") or ""
    if not group:
        errors.append(FieldError("spec.group", "FieldValueRequired", "Required value"))
    elif "." not in group:
        errors.append(
            FieldError(
                "spec.group",
                "FieldValueInvalid",
                f'Invalid value: "{group}": should be a domain with at least one dot',
            )
        )
    for field in ("plural", "kind"):
        if not names_.get(field):
            errors.append(FieldError(f"spec.names.{field}", "FieldValueRequired", "Required value"))
    if plural and group and crd["metadata"].get("name") != f"{plural}.{group}":
        errors.append(
            FieldError(
                "metadata.name",
                "FieldValueInvalid",
                f'Invalid value: "{crd["metadata"].get("name")}": must be spec.names.plural+"."+spec.group',
            )
        )
    if spec.get("scope", "Namespaced") not in ("Namespaced", "Cluster"):
        errors.append(
            FieldError(
                "spec.scope",
                "FieldValueNotSupported",
                f'Unsupported value: "{spec.get("scope")}": supported values: "Cluster", "Namespaced"',
            )
        )
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        errors.append(
            FieldError(
                "spec.versions",
                "FieldValueInvalid",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
        return errors
    if sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        errors.append(
            FieldError(
                "spec.versions",
                "FieldValueInvalid",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
    for i, version in enumerate(versions):
        if not isinstance(version, dict) or not version.get("name"):
            errors.append(FieldError(f"spec.versions[{i}].name", "FieldValueRequired", "Required value"))
    return errors


def _crd_immutable_errors(new: Obj, old: Obj) -> list[FieldError]:
    errors = []
    for field in ("group", "scope"):
        if new["spec"].get(field, "Namespaced") != old["spec"].get(field, "Namespaced"):
            errors.append(
                FieldError(f"spec.{field}", "FieldValueInvalid", "Invalid value: field is immutable")
            )
    return errors
