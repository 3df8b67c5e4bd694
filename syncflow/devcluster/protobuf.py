"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``) decoded to JSON-shaped dicts.

kubectl's imperative generators (``kubectl create configmap|secret|namespace|serviceaccount|deployment|
service|job|cronjob|role|rolebinding|clusterrole|clusterrolebinding``) POST their objects as protobuf.
A body is the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` whose ``raw`` holds the
typed message.

The decoder is a small wire-format reader driven by a declarative table of the messages those
generators (and ``kubectl create token``) send. Field numbers come from the ``generated.proto`` files
of kubernetes/api (core/v1, apps/v1, batch/v1, rbac/v1, authentication/v1) and kubernetes/apimachinery
(meta/v1, runtime, intstr, resource).

Go serialises every non-pointer field, so a zero value on the wire means "unset" and is dropped, as
JSON's ``omitempty`` would; fields that are pointers in Go (``presence``) keep their zero values.
A field missing from the table is skipped when empty and rejected otherwise, so no data is lost silently.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum, auto
from typing import Any

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf message this decoder understands."""


class Kind(Enum):
    """How one field's wire value becomes JSON."""

    STRING = auto()
    BYTES = auto()  # base64 string, as Go's JSON encodes []byte
    INT = auto()  # int32 / int64
    BOOL = auto()
    MESSAGE = auto()  # a message of the table, named by Field.message
    TIME = auto()  # meta/v1 Time {seconds = 1, nanos = 2} -> RFC 3339
    QUANTITY = auto()  # resource.Quantity {string = 1} -> "500m"
    INT_OR_STRING = auto()  # intstr.IntOrString {type = 1, intVal = 2, strVal = 3}
    STRING_MAP = auto()  # map<string, string>
    BYTES_MAP = auto()  # map<string, bytes>
    QUANTITY_MAP = auto()  # map<string, Quantity>


@dataclass(frozen=True)
class Field:
    """One field of a message: its JSON name and how to read it."""

    name: str
    kind: Kind
    message: str = ""
    repeated: bool = False
    presence: bool = False  # a Go pointer: present on the wire only when set, zero values are meaningful
    inline: bool = False  # an embedded struct whose fields JSON puts in the parent


def _s(name: str, *, presence: bool = False) -> Field:
    return Field(name, Kind.STRING, presence=presence)


def _strings(name: str) -> Field:
    return Field(name, Kind.STRING, repeated=True)


def _i(name: str, *, presence: bool = False) -> Field:
    return Field(name, Kind.INT, presence=presence)


def _b(name: str, *, presence: bool = False) -> Field:
    return Field(name, Kind.BOOL, presence=presence)


def _m(name: str, message: str, *, presence: bool = False) -> Field:
    return Field(name, Kind.MESSAGE, message, presence=presence)


def _ms(name: str, message: str) -> Field:
    return Field(name, Kind.MESSAGE, message, repeated=True)


def _inline(message: str) -> Field:
    return Field("", Kind.MESSAGE, message, inline=True)


_META = "ObjectMeta"

# message name -> field number -> field
MESSAGES: dict[str, dict[int, Field]] = {
    # k8s.io/apimachinery/pkg/runtime (the envelope, runtime.Unknown, is read by decode())
    "TypeMeta": {1: _s("apiVersion"), 2: _s("kind")},
    # k8s.io/apimachinery/pkg/apis/meta/v1
    _META: {
        1: _s("name"),
        2: _s("generateName"),
        3: _s("namespace"),
        4: _s("selfLink"),
        5: _s("uid"),
        6: _s("resourceVersion"),
        7: _i("generation"),
        8: Field("creationTimestamp", Kind.TIME),
        9: Field("deletionTimestamp", Kind.TIME),
        10: _i("deletionGracePeriodSeconds", presence=True),
        11: Field("labels", Kind.STRING_MAP),
        12: Field("annotations", Kind.STRING_MAP),
        13: _ms("ownerReferences", "OwnerReference"),
        14: _strings("finalizers"),
    },
    "OwnerReference": {
        5: _s("apiVersion"),
        1: _s("kind"),
        3: _s("name"),
        4: _s("uid"),
        6: _b("controller", presence=True),
        7: _b("blockOwnerDeletion", presence=True),
    },
    "LabelSelector": {
        1: Field("matchLabels", Kind.STRING_MAP),
        2: _ms("matchExpressions", "LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {1: _s("key"), 2: _s("operator"), 3: _strings("values")},
    # k8s.io/api/core/v1
    "Namespace": {
        1: _m("metadata", _META),
        2: _m("spec", "NamespaceSpec"),
        3: _m("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: _strings("finalizers")},
    "NamespaceStatus": {1: _s("phase"), 2: _ms("conditions", "NamespaceCondition")},
    "NamespaceCondition": {
        1: _s("type"),
        2: _s("status"),
        4: Field("lastTransitionTime", Kind.TIME),
        5: _s("reason"),
        6: _s("message"),
    },
    "ConfigMap": {
        1: _m("metadata", _META),
        4: _b("immutable", presence=True),
        2: Field("data", Kind.STRING_MAP),
        3: Field("binaryData", Kind.BYTES_MAP),
    },
    "Secret": {
        1: _m("metadata", _META),
        5: _b("immutable", presence=True),
        2: Field("data", Kind.BYTES_MAP),
        4: Field("stringData", Kind.STRING_MAP),
        3: _s("type"),
    },
    "ServiceAccount": {
        1: _m("metadata", _META),
        2: _ms("secrets", "ObjectReference"),
        3: _ms("imagePullSecrets", "LocalObjectReference"),
        4: _b("automountServiceAccountToken", presence=True),
    },
    "ObjectReference": {
        1: _s("kind"),
        2: _s("namespace"),
        3: _s("name"),
        4: _s("uid"),
        5: _s("apiVersion"),
        6: _s("resourceVersion"),
        7: _s("fieldPath"),
    },
    "LocalObjectReference": {1: _s("name")},
    "Service": {1: _m("metadata", _META), 2: _m("spec", "ServiceSpec"), 3: _m("status", "ServiceStatus")},
    "ServiceSpec": {
        1: _ms("ports", "ServicePort"),
        2: Field("selector", Kind.STRING_MAP),
        3: _s("clusterIP"),
        18: _strings("clusterIPs"),
        4: _s("type"),
        5: _strings("externalIPs"),
        7: _s("sessionAffinity"),
        8: _s("loadBalancerIP"),
        9: _strings("loadBalancerSourceRanges"),
        10: _s("externalName"),
        11: _s("externalTrafficPolicy"),
        12: _i("healthCheckNodePort"),
        13: _b("publishNotReadyAddresses"),
        19: _strings("ipFamilies"),
        17: _s("ipFamilyPolicy", presence=True),
        20: _b("allocateLoadBalancerNodePorts", presence=True),
        21: _s("loadBalancerClass", presence=True),
        22: _s("internalTrafficPolicy", presence=True),
    },
    "ServicePort": {
        1: _s("name"),
        2: _s("protocol"),
        6: _s("appProtocol", presence=True),
        3: _i("port"),
        4: Field("targetPort", Kind.INT_OR_STRING),
        5: _i("nodePort"),
    },
    "ServiceStatus": {1: _m("loadBalancer", "LoadBalancerStatus")},
    "LoadBalancerStatus": {1: _ms("ingress", "LoadBalancerIngress")},
    "LoadBalancerIngress": {1: _s("ip"), 2: _s("hostname")},
    "PodTemplateSpec": {1: _m("metadata", _META), 2: _m("spec", "PodSpec")},
    "PodSpec": {
        20: _ms("initContainers", "Container"),
        2: _ms("containers", "Container"),
        3: _s("restartPolicy"),
        4: _i("terminationGracePeriodSeconds", presence=True),
        5: _i("activeDeadlineSeconds", presence=True),
        6: _s("dnsPolicy"),
        7: Field("nodeSelector", Kind.STRING_MAP),
        8: _s("serviceAccountName"),
        9: _s("serviceAccount"),
        21: _b("automountServiceAccountToken", presence=True),
        10: _s("nodeName"),
        11: _b("hostNetwork"),
        12: _b("hostPID"),
        13: _b("hostIPC"),
        27: _b("shareProcessNamespace", presence=True),
        15: _ms("imagePullSecrets", "LocalObjectReference"),
        16: _s("hostname"),
        17: _s("subdomain"),
        19: _s("schedulerName"),
        24: _s("priorityClassName"),
        25: _i("priority", presence=True),
        29: _s("runtimeClassName", presence=True),
        30: _b("enableServiceLinks", presence=True),
        31: _s("preemptionPolicy", presence=True),
        35: _b("setHostnameAsFQDN", presence=True),
    },
    "Container": {
        1: _s("name"),
        2: _s("image"),
        3: _strings("command"),
        4: _strings("args"),
        5: _s("workingDir"),
        6: _ms("ports", "ContainerPort"),
        19: _ms("envFrom", "EnvFromSource"),
        7: _ms("env", "EnvVar"),
        8: _m("resources", "ResourceRequirements"),
        13: _s("terminationMessagePath"),
        20: _s("terminationMessagePolicy"),
        14: _s("imagePullPolicy"),
        16: _b("stdin"),
        17: _b("stdinOnce"),
        18: _b("tty"),
    },
    "ContainerPort": {
        1: _s("name"),
        2: _i("hostPort"),
        3: _i("containerPort"),
        4: _s("protocol"),
        5: _s("hostIP"),
    },
    "EnvVar": {1: _s("name"), 2: _s("value"), 3: _m("valueFrom", "EnvVarSource", presence=True)},
    "EnvVarSource": {
        1: _m("fieldRef", "ObjectFieldSelector", presence=True),
        2: _m("resourceFieldRef", "ResourceFieldSelector", presence=True),
        3: _m("configMapKeyRef", "KeySelector", presence=True),
        4: _m("secretKeyRef", "KeySelector", presence=True),
    },
    "ObjectFieldSelector": {1: _s("apiVersion"), 2: _s("fieldPath")},
    "ResourceFieldSelector": {1: _s("containerName"), 2: _s("resource"), 3: Field("divisor", Kind.QUANTITY)},
    # ConfigMapKeySelector and SecretKeySelector share their layout
    "KeySelector": {1: _inline("LocalObjectReference"), 2: _s("key"), 3: _b("optional", presence=True)},
    "EnvFromSource": {
        1: _s("prefix"),
        2: _m("configMapRef", "EnvSource", presence=True),
        3: _m("secretRef", "EnvSource", presence=True),
    },
    # ConfigMapEnvSource and SecretEnvSource share their layout
    "EnvSource": {1: _inline("LocalObjectReference"), 2: _b("optional", presence=True)},
    "ResourceRequirements": {1: Field("limits", Kind.QUANTITY_MAP), 2: Field("requests", Kind.QUANTITY_MAP)},
    # k8s.io/api/apps/v1
    "Deployment": {
        1: _m("metadata", _META),
        2: _m("spec", "DeploymentSpec"),
        3: _m("status", "DeploymentStatus"),
    },
    "DeploymentSpec": {
        1: _i("replicas", presence=True),
        2: _m("selector", "LabelSelector", presence=True),
        3: _m("template", "PodTemplateSpec"),
        4: _m("strategy", "DeploymentStrategy"),
        5: _i("minReadySeconds"),
        6: _i("revisionHistoryLimit", presence=True),
        7: _b("paused"),
        9: _i("progressDeadlineSeconds", presence=True),
        10: _s("podReplacementPolicy", presence=True),
    },
    "DeploymentStrategy": {1: _s("type"), 2: _m("rollingUpdate", "RollingUpdateDeployment", presence=True)},
    "RollingUpdateDeployment": {
        1: Field("maxUnavailable", Kind.INT_OR_STRING, presence=True),
        2: Field("maxSurge", Kind.INT_OR_STRING, presence=True),
    },
    "DeploymentStatus": {
        1: _i("observedGeneration"),
        2: _i("replicas"),
        3: _i("updatedReplicas"),
        7: _i("readyReplicas"),
        4: _i("availableReplicas"),
        5: _i("unavailableReplicas"),
        9: _i("terminatingReplicas", presence=True),
        6: _ms("conditions", "DeploymentCondition"),
        8: _i("collisionCount", presence=True),
    },
    "DeploymentCondition": {
        1: _s("type"),
        2: _s("status"),
        6: Field("lastUpdateTime", Kind.TIME),
        7: Field("lastTransitionTime", Kind.TIME),
        4: _s("reason"),
        5: _s("message"),
    },
    # k8s.io/api/batch/v1 (kubectl create job, also --from=cronjob/<name>, and kubectl create cronjob)
    "Job": {1: _m("metadata", _META), 2: _m("spec", "JobSpec"), 3: _m("status", "JobStatus")},
    "JobSpec": {
        1: _i("parallelism", presence=True),
        2: _i("completions", presence=True),
        3: _i("activeDeadlineSeconds", presence=True),
        11: _m("podFailurePolicy", "PodFailurePolicy", presence=True),
        16: _m("successPolicy", "SuccessPolicy", presence=True),
        7: _i("backoffLimit", presence=True),
        12: _i("backoffLimitPerIndex", presence=True),
        13: _i("maxFailedIndexes", presence=True),
        4: _m("selector", "LabelSelector", presence=True),
        5: _b("manualSelector", presence=True),
        6: _m("template", "PodTemplateSpec"),
        8: _i("ttlSecondsAfterFinished", presence=True),
        9: _s("completionMode", presence=True),
        10: _b("suspend", presence=True),
        14: _s("podReplacementPolicy", presence=True),
        15: _s("managedBy", presence=True),
    },
    "PodFailurePolicy": {1: _ms("rules", "PodFailurePolicyRule")},
    "PodFailurePolicyRule": {
        1: _s("action"),
        2: _m("onExitCodes", "PodFailurePolicyOnExitCodesRequirement", presence=True),
        3: _ms("onPodConditions", "PodFailurePolicyOnPodConditionsPattern"),
    },
    "PodFailurePolicyOnExitCodesRequirement": {
        1: _s("containerName", presence=True),
        2: _s("operator"),
        3: Field("values", Kind.INT, repeated=True),
    },
    "PodFailurePolicyOnPodConditionsPattern": {1: _s("type"), 2: _s("status")},
    "SuccessPolicy": {1: _ms("rules", "SuccessPolicyRule")},
    "SuccessPolicyRule": {1: _s("succeededIndexes", presence=True), 2: _i("succeededCount", presence=True)},
    "JobStatus": {
        1: _ms("conditions", "JobCondition"),
        2: Field("startTime", Kind.TIME),
        3: Field("completionTime", Kind.TIME),
        4: _i("active"),
        5: _i("succeeded"),
        6: _i("failed"),
        11: _i("terminating", presence=True),
        7: _s("completedIndexes"),
        10: _s("failedIndexes", presence=True),
        8: _m("uncountedTerminatedPods", "UncountedTerminatedPods", presence=True),
        9: _i("ready", presence=True),
    },
    "UncountedTerminatedPods": {1: _strings("succeeded"), 2: _strings("failed")},
    "JobCondition": {
        1: _s("type"),
        2: _s("status"),
        3: Field("lastProbeTime", Kind.TIME),
        4: Field("lastTransitionTime", Kind.TIME),
        5: _s("reason"),
        6: _s("message"),
    },
    "JobTemplateSpec": {1: _m("metadata", _META), 2: _m("spec", "JobSpec")},
    "CronJob": {1: _m("metadata", _META), 2: _m("spec", "CronJobSpec"), 3: _m("status", "CronJobStatus")},
    "CronJobSpec": {
        1: _s("schedule"),
        8: _s("timeZone", presence=True),
        2: _i("startingDeadlineSeconds", presence=True),
        3: _s("concurrencyPolicy"),
        4: _b("suspend", presence=True),
        5: _m("jobTemplate", "JobTemplateSpec"),
        6: _i("successfulJobsHistoryLimit", presence=True),
        7: _i("failedJobsHistoryLimit", presence=True),
    },
    "CronJobStatus": {
        1: _ms("active", "ObjectReference"),
        4: Field("lastScheduleTime", Kind.TIME),
        5: Field("lastSuccessfulTime", Kind.TIME),
    },
    # k8s.io/api/rbac/v1
    "Role": {1: _m("metadata", _META), 2: _ms("rules", "PolicyRule")},
    "ClusterRole": {
        1: _m("metadata", _META),
        2: _ms("rules", "PolicyRule"),
        3: _m("aggregationRule", "AggregationRule", presence=True),
    },
    "PolicyRule": {
        1: _strings("verbs"),
        2: _strings("apiGroups"),
        3: _strings("resources"),
        4: _strings("resourceNames"),
        5: _strings("nonResourceURLs"),
    },
    "AggregationRule": {1: _ms("clusterRoleSelectors", "LabelSelector")},
    "RoleBinding": {1: _m("metadata", _META), 2: _ms("subjects", "Subject"), 3: _m("roleRef", "RoleRef")},
    "ClusterRoleBinding": {
        1: _m("metadata", _META),
        2: _ms("subjects", "Subject"),
        3: _m("roleRef", "RoleRef"),
    },
    "Subject": {1: _s("kind"), 2: _s("apiGroup"), 3: _s("name"), 4: _s("namespace")},
    "RoleRef": {1: _s("apiGroup"), 2: _s("kind"), 3: _s("name")},
    # k8s.io/api/authentication/v1 (kubectl create token)
    "TokenRequest": {
        1: _m("metadata", _META),
        2: _m("spec", "TokenRequestSpec"),
        3: _m("status", "TokenRequestStatus"),
    },
    "TokenRequestSpec": {
        1: _strings("audiences"),
        4: _i("expirationSeconds", presence=True),
        3: _m("boundObjectRef", "BoundObjectReference", presence=True),
    },
    "BoundObjectReference": {1: _s("kind"), 2: _s("apiVersion"), 3: _s("name"), 4: _s("uid")},
    "TokenRequestStatus": {1: _s("token"), 2: Field("expirationTimestamp", Kind.TIME)},
}

_RBAC = "rbac.authorization.k8s.io/v1"

# (apiVersion, kind) of the top-level objects -> message
TOP_LEVEL: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Service"): "Service",
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    (_RBAC, "Role"): "Role",
    (_RBAC, "ClusterRole"): "ClusterRole",
    (_RBAC, "RoleBinding"): "RoleBinding",
    (_RBAC, "ClusterRoleBinding"): "ClusterRoleBinding",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
}

_EXPECTED_WIRE = {
    Kind.INT: _VARINT,
    Kind.BOOL: _VARINT,
}


def supported_kinds() -> str:
    """The kinds whose protobuf form is understood, for error messages."""
    return ", ".join(f"{kind} ({api_version})" for api_version, kind in TOP_LEVEL)


def decode(body: bytes) -> dict[str, Any]:
    """Decode a Kubernetes protobuf body into the dict its JSON form would parse to."""
    if not body.startswith(MAGIC):
        raise ProtobufError("not a Kubernetes protobuf body: it does not start with the k8s\\x00 prefix")
    # runtime.Unknown: typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4
    envelope = _scalars(body[len(MAGIC) :])
    type_meta, raw = _bytes(envelope, 1, "Unknown.typeMeta"), _bytes(envelope, 2, "Unknown.raw")
    encoding, content_type = (
        _bytes(envelope, 3, "Unknown.contentEncoding"),
        _bytes(envelope, 4, "Unknown.contentType"),
    )
    if encoding:
        raise ProtobufError(f"unsupported protobuf content encoding {encoding!r}")
    if content_type not in (b"", MEDIA_TYPE.encode()):
        raise ProtobufError(f"unsupported content type {content_type!r} inside the protobuf envelope")
    meta = _message(type_meta, "TypeMeta")
    api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
    name = TOP_LEVEL.get((api_version, kind))
    if name is None:
        raise ProtobufError(
            f"protobuf request bodies are only understood for {supported_kinds()}; "
            f"send {kind or '<no kind>'} ({api_version or '<no apiVersion>'}) as application/json"
        )
    return {"apiVersion": api_version, "kind": kind, **_message(raw, name)}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated protobuf varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise ProtobufError("protobuf varint longer than 10 bytes")


def _wire_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) of one message: ints for scalars, bytes for length-delimited."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("protobuf field number 0 is invalid")
        value: int | bytes
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if pos + size > len(data):
                raise ProtobufError("truncated protobuf fixed-width field")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ProtobufError("truncated protobuf length-delimited field")
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ProtobufError(f"unsupported protobuf wire type {wire} (field {number})")
        yield number, wire, value


def _message(data: bytes, name: str) -> dict[str, Any]:
    schema = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in _wire_fields(data):
        field = schema.get(number)
        if field is None:
            if value:
                raise ProtobufError(
                    f"field {number} of {name} is not understood by devcluster's protobuf decoder; "
                    "send the object as application/json"
                )
            continue
        expected = _EXPECTED_WIRE.get(field.kind, _LEN)
        if wire != expected:
            raise ProtobufError(f"{name}.{field.name or number}: wire type {wire}, expected {expected}")
        decoded = _value(field, value, name)
        if field.inline:
            out.update(decoded)
        elif field.kind in (Kind.STRING_MAP, Kind.BYTES_MAP, Kind.QUANTITY_MAP):
            out.setdefault(field.name, {}).update(decoded)
        elif field.repeated:
            out.setdefault(field.name, []).append(decoded)
        elif field.presence or not _empty(decoded):
            out[field.name] = decoded
    return out


def _value(field: Field, value: int | bytes, owner: str) -> Any:
    if isinstance(value, int):
        if field.kind is Kind.BOOL:
            return value != 0
        return value - (1 << 64) if value >= 1 << 63 else value  # int32/int64 are two's complement varints
    match field.kind:
        case Kind.STRING:
            return _text(value, f"{owner}.{field.name}")
        case Kind.BYTES:
            return base64.b64encode(value).decode("ascii")
        case Kind.MESSAGE:
            return _message(value, field.message)
        case Kind.TIME:
            return _time(value)
        case Kind.QUANTITY:
            return _quantity(value)
        case Kind.INT_OR_STRING:
            return _int_or_string(value)
        case _:
            return _map_entry(field, value, owner)


def _text(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError(f"{where}: string is not valid UTF-8") from None


def _empty(value: Any) -> bool:
    return value in ("", 0, False) or value == {}


def _scalars(data: bytes) -> dict[int, int | bytes]:
    return {number: value for number, _, value in _wire_fields(data)}


def _bytes(fields: dict[int, int | bytes], number: int, where: str) -> bytes:
    value = fields.get(number, b"")
    if not isinstance(value, bytes):
        raise ProtobufError(f"{where}: expected a length-delimited field")
    return value


def _time(data: bytes) -> str:
    """meta/v1 Time as JSON writes it: RFC 3339, whole seconds, UTC; the zero time is ``""`` (dropped)."""
    seconds = _scalars(data).get(1, 0)
    if not data or not isinstance(seconds, int):
        return ""
    seconds = seconds - (1 << 64) if seconds >= 1 << 63 else seconds
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _quantity(data: bytes) -> str:
    return _text(_bytes(_scalars(data), 1, "Quantity.string"), "Quantity.string")


def _int_or_string(data: bytes) -> int | str:
    fields = _scalars(data)
    if fields.get(1, 0) == 1:
        return _text(_bytes(fields, 3, "IntOrString.strVal"), "IntOrString.strVal")
    number = fields.get(2, 0)
    if not isinstance(number, int):
        raise ProtobufError("IntOrString.intVal is not a varint")
    return number - (1 << 64) if number >= 1 << 63 else number


def _map_entry(field: Field, data: bytes, owner: str) -> dict[str, Any]:
    """One ``map<string, V>`` entry (a message with key = 1, value = 2) as a one-item dict."""
    where = f"{owner}.{field.name}"
    fields = _scalars(data)
    key, value = _bytes(fields, 1, where), _bytes(fields, 2, where)
    if field.kind is Kind.STRING_MAP:
        return {_text(key, where): _text(value, where)}
    if field.kind is Kind.BYTES_MAP:
        return {_text(key, where): base64.b64encode(value).decode("ascii")}
    return {_text(key, where): _quantity(value)}
