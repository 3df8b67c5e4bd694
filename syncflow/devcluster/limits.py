"""Size limits of kube-apiserver and etcd, with the errors they answer.

- A request body over 3 MiB: ``413 RequestEntityTooLarge`` ("Request entity too large: limit is 3145728").
- A Secret or ConfigMap whose data (values, decoded) exceed 1 MiB: ``422``, "Too long: must have at
  most 1048576 bytes" on ``data`` (Secret) or on the whole object (ConfigMap, field ``[]``).
- A stored object over etcd's request limit (1.5 MiB): ``500`` with etcd's message
  "etcdserver: request is too large" and no reason, as kube-apiserver passes it on. etcd measures
  the protobuf encoding; devcluster measures compact JSON, which is somewhat larger, so it refuses
  somewhat earlier.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from syncflow.devcluster.errors import FieldError, StatusError
from syncflow.devcluster.resources import ResourceType
from syncflow.devcluster.store import Obj

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
MAX_SECRET_SIZE = 1024 * 1024
MAX_STORED_BYTES = 3 * 512 * 1024  # etcd's default --max-request-bytes (1.5 MiB)


def request_entity_too_large() -> StatusError:
    """The 413 for a request body over :data:`MAX_REQUEST_BODY_BYTES`."""
    return StatusError(
        413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"
    )


def _decoded_length(value: object) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)


def data_size_errors(rtype: ResourceType, obj: Obj) -> list[FieldError]:
    """The 1 MiB data limit of Secrets and ConfigMaps."""
    if rtype.group != "" or rtype.plural not in ("secrets", "configmaps"):
        return []
    too_long = f"Too long: must have at most {MAX_SECRET_SIZE} bytes"
    if rtype.plural == "secrets":
        data = obj.get("data") or {}
        size = sum(_decoded_length(v) for v in data.values()) if isinstance(data, dict) else 0
        return [FieldError("data", "FieldValueTooLong", too_long)] if size > MAX_SECRET_SIZE else []
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    size = sum(len(str(v).encode()) for v in data.values()) if isinstance(data, dict) else 0
    size += sum(_decoded_length(v) for v in binary.values()) if isinstance(binary, dict) else 0
    return [FieldError("[]", "FieldValueTooLong", too_long)] if size > MAX_SECRET_SIZE else []


def check_stored_size(obj: Obj) -> None:
    """Refuse to store an object etcd would refuse."""
    if len(orjson.dumps(obj)) > MAX_STORED_BYTES:
        raise StatusError(500, "", "etcdserver: request is too large")
