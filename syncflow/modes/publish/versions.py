"""Kubernetes version ordering: GA before beta before alpha, higher numbers first."""

from __future__ import annotations

import re

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 0, "beta": 1, "alpha": 2}


def priority_key(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in kube-aware priority order (``v2, v1, v1beta1, v1alpha1, foo``)."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stability, minor = match.groups()
    return (_STABILITY[stability], -int(major), -int(minor or 0), version)


def sort_versions(versions: list[str]) -> list[str]:
    """``versions`` in kube-aware priority order."""
    return sorted(versions, key=priority_key)
