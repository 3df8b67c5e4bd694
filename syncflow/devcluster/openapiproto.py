"""OpenAPI v2 as protobuf (gnostic's ``openapi.v2.Document``), the form client-go asks /openapi/v2 for.

Only what devcluster's documents hold is encoded: the swagger version, info, and definitions
whose schemas use ``$ref``, ``description``, ``format``, ``type``, ``required``, ``items``,
``properties``, ``additionalProperties`` and vendor extensions (``x-…``, as YAML text, which
JSON is). Field numbers are those of gnostic's OpenAPIv2.proto.
"""

from __future__ import annotations

from typing import Any

import orjson

MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""The media type answered (Go's mime parser refuses the ``@`` of the one client-go asks for)."""
ACCEPTED = (MEDIA_TYPE, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): strings and messages."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _bool(number: int, value: bool) -> bytes:
    return _varint(number << 3) + _varint(int(value))


def _text(number: int, value: str) -> bytes:
    return _field(number, value.encode())


def _named(name: str, payload: bytes) -> bytes:
    """A ``Named*`` message: name (1) and value (2)."""
    return _text(1, name) + _field(2, payload)


def _schema(schema: dict[str, Any]) -> bytes:
    out = bytearray()
    for key, number in (("$ref", 1), ("format", 2), ("description", 4)):
        if isinstance(schema.get(key), str):
            out += _text(number, schema[key])
    for name in schema.get("required") or []:
        out += _text(19, name)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += _field(21, _field(1, _schema(extra)))
    elif isinstance(extra, bool):
        out += _field(21, _bool(2, extra))
    if isinstance(schema.get("type"), str):
        out += _field(22, _text(1, schema["type"]))
    if isinstance(schema.get("items"), dict):
        out += _field(23, _field(1, _schema(schema["items"])))
    properties = schema.get("properties") or {}
    if properties:
        out += _field(25, b"".join(_field(1, _named(k, _schema(v))) for k, v in properties.items()))
    for key, value in schema.items():
        if key.startswith("x-"):
            out += _field(31, _named(key, _text(2, orjson.dumps(value).decode())))
    return bytes(out)


def encode(document: dict[str, Any]) -> bytes:
    """The protobuf form of a Swagger 2.0 document made by :func:`syncflow.devcluster.openapi.v2_document`."""
    info = document.get("info") or {}
    definitions = b"".join(
        _field(1, _named(name, _schema(schema)))
        for name, schema in (document.get("definitions") or {}).items()
    )
    return (
        _text(1, document["swagger"])
        + _field(2, _text(1, info.get("title", "")) + _text(2, info.get("version", "")))
        + _field(9, definitions)
    )
