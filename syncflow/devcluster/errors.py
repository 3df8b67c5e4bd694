"""API errors as kube-apiserver reports them: ``metav1.Status`` bodies with reason, code and causes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One cause of a 422 Invalid: ``field`` is a JSON path such as ``spec.replicas``.

    ``reason`` is a Kubernetes cause type: ``FieldValueRequired``, ``FieldValueInvalid``,
    ``FieldValueNotSupported``, ``FieldValueTypeInvalid``, ``FieldValueForbidden``,
    ``FieldValueDuplicate``, ``FieldValueTooLong``.
    """

    field: str
    reason: str
    message: str

    def describe(self) -> str:
        """The cause as kubectl shows it: ``spec.replicas: Invalid value: ...``."""
        return f"{self.field}: {self.message}"


@dataclass
class StatusError(Exception):
    """An error answered as a Kubernetes ``Status`` object."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def body(self) -> dict[str, Any]:
        """The ``Status`` body sent to the client."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # an error kube-apiserver passes on from elsewhere (e.g. etcd) has none
            status["reason"] = self.reason
        if self.details:
            status["details"] = self.details
        status["code"] = self.code  # metav1.Status's field order: ..., reason, details, code
        return status


def _details(resource: str, name: str, group: str = "") -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "group": group, "kind": resource}  # StatusDetails' order
    if not group:
        del details["group"]
    return details


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    """404: ``configmaps "x" not found``."""
    return StatusError(
        404, "NotFound", f'{_qualified(resource, group)} "{name}" not found', _details(resource, name, group)
    )


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    """409 on create of an existing name."""
    return StatusError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        _details(resource, name, group),
    )


def conflict(resource: str, name: str, group: str = "", why: str = "") -> StatusError:
    """409 on a write with a stale resourceVersion."""
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        _details(resource, name, group),
    )


def invalid(kind: str, name: str, errors: list[FieldError], group: str = "") -> StatusError:
    """422 with one cause per field error, worded as kube-apiserver does."""
    summary = ", ".join(e.describe() for e in errors)
    if len(errors) > 1:
        summary = "[" + summary + "]"
    details = {
        **_details(kind, name, group),
        "causes": [{"reason": e.reason, "message": e.message, "field": e.field} for e in errors],
    }
    return StatusError(
        422, "Invalid", f"{kind}.{group or ''}".rstrip(".") + f' "{name}" is invalid: {summary}', details
    )


def bad_request(message: str) -> StatusError:
    """400 BadRequest."""
    return StatusError(400, "BadRequest", message)


def forbidden(message: str) -> StatusError:
    """403 Forbidden."""
    return StatusError(403, "Forbidden", message)


def namespace_terminating(resource: str, name: str, namespace: str, group: str = "") -> StatusError:
    """403 from the NamespaceLifecycle admission: no new content in a namespace being terminated (the
    ``NamespaceTerminating`` cause tells clients that it clears by itself)."""
    details = _details(resource, name, group)
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return StatusError(
        403,
        "Forbidden",
        f'{_qualified(resource, group)} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated",
        details,
    )


def method_not_allowed(message: str) -> StatusError:
    """405 MethodNotAllowed."""
    return StatusError(405, "MethodNotAllowed", message)


def unsupported_media_type(message: str) -> StatusError:
    """415 UnsupportedMediaType."""
    return StatusError(415, "UnsupportedMediaType", message)


def gone(message: str) -> StatusError:
    """410 Gone (expired resourceVersion or continue token)."""
    return StatusError(410, "Expired", message)


def unauthorized() -> StatusError:
    """401 for a missing or wrong bearer token."""
    return StatusError(401, "Unauthorized", "Unauthorized")
