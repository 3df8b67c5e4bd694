"""sprig's hashes, base64/base32 and JSON functions, and api-syncagent's ``sha3sum``/``sha3short``/
``shortHash``; JSON is Go's ``encoding/json`` (:mod:`syncflow.gocompat.gojson`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from collections.abc import Mapping
from typing import Any

from syncflow.gocompat import gojson
from syncflow.templating.errors import CallError
from syncflow.templating.func import Func
from syncflow.templating.values import Method, Struct

_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def sha3sum(value: str) -> str:
    """The hex SHA3-256 digest of ``value``."""
    return hashlib.sha3_256(value.encode()).hexdigest()


def short_hash(value: str) -> str:
    """The first 20 hex characters of the SHA-1 of ``value`` (api-syncagent's ``shortHash``)."""
    return hashlib.sha1(value.encode(), usedforsecurity=False).hexdigest()[:20]


def _sha3short(value: str, *lengths: int) -> str:
    if len(lengths) > 1:
        raise CallError(f"sha3short: expected at most one length argument, got {len(lengths)}")
    length = lengths[0] if lengths else 20
    if length <= 0:
        raise CallError(f"sha3short: invalid length {length}")
    return sha3sum(value)[:length]


def _digest(name: str) -> Func:
    return Func(lambda value: hashlib.new(name, value.encode()).hexdigest(), ("string",))


def _b64_error(data: bytes) -> int:
    """Where Go's ``base64.StdEncoding`` stops on ``data`` (its ``CorruptInputError`` offset), or -1."""
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == len(data):
                if j == 0:
                    return -1
                return si - j
            byte = data[si]
            si += 1
            if byte in _B64:
                j += 1
                continue
            if byte in b"\r\n":
                continue
            if byte != ord("=") or j < 2:
                return si - 1
            if j == 2:
                while si < len(data) and data[si] in b"\r\n":
                    si += 1
                if si == len(data):
                    return len(data)
                if data[si] != ord("="):
                    return si - 1
                si += 1
            while si < len(data) and data[si] in b"\r\n":
                si += 1
            return si if si < len(data) else -1


def _b64dec(value: str) -> str:
    """sprig's ``b64dec``: the decoded text, or Go's error message as the result."""
    data = value.encode()
    if (offset := _b64_error(data)) >= 0:
        return f"illegal base64 data at input byte {offset}"
    return base64.b64decode(data.replace(b"\r", b"").replace(b"\n", b"")).decode(errors="replace")


def _b32dec(value: str) -> str:
    try:
        return base64.b32decode(value.replace("\r", "").replace("\n", "")).decode(errors="replace")
    except binascii.Error:
        return "illegal base32 data"


def plain(value: Any) -> Any:
    """Template data as ``encoding/json`` sees it: a struct keeps its field order, methods are left out."""
    if isinstance(value, Struct):
        return Struct({k: plain(v) for k, v in value.items() if not isinstance(v, Method)})
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _json(value: Any, escape_html: bool = True, indent: str | None = None) -> str:
    """``json.Marshal``; sprig's non-``must`` forms print "" when Go's encoder fails."""
    try:
        return gojson.encode(plain(value), escape_html=escape_html, indent=indent, keep_order=Struct)
    except gojson.UnsupportedValueError:
        return ""


def _from_json(text: str) -> Any:
    """sprig's ``fromJson``: numbers become float64 as in Go; bad JSON gives nil."""
    try:
        return json.loads(text, parse_int=float, parse_constant=lambda _: None)
    except ValueError:
        return None


FUNCTIONS: dict[str, Func] = {
    "sha3sum": Func(sha3sum, ("string",)),
    "sha3short": Func(_sha3short, ("string",), "int"),
    "shortHash": Func(short_hash, ("string",)),
    "sha1sum": _digest("sha1"),
    "sha256sum": _digest("sha256"),
    "sha512sum": _digest("sha512"),
    "adler32sum": Func(lambda value: str(zlib.adler32(value.encode())), ("string",)),
    "b64enc": Func(lambda value: base64.b64encode(value.encode()).decode(), ("string",)),
    "b64dec": Func(_b64dec, ("string",)),
    "b32enc": Func(lambda value: base64.b32encode(value.encode()).decode(), ("string",)),
    "b32dec": Func(_b32dec, ("string",)),
    "toJson": Func(_json, ("any",)),
    "toRawJson": Func(lambda value: _json(value, escape_html=False), ("any",)),
    "toPrettyJson": Func(lambda value: _json(value, indent="  "), ("any",)),
    "fromJson": Func(_from_json, ("string",)),
}
