"""Only a NotFound that names the object counts as "the kcp object is gone"."""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException

from syncflow.sync.reconciler import object_not_found


def _error(status: int, body: object) -> ApiException:
    error = ApiException(status=status, reason="Not Found")
    error.body = json.dumps(body)
    return error


def test_not_found_naming_the_object() -> None:
    body = {
        "kind": "Status",
        "reason": "NotFound",
        "code": 404,
        "message": 'widgets "w" not found',
        "details": {"name": "w", "kind": "widgets"},
    }
    assert object_not_found(_error(404, body))


def test_not_found_for_an_unserved_resource_is_not_a_deletion() -> None:
    body = {
        "kind": "Status",
        "reason": "NotFound",
        "code": 404,
        "message": "the server could not find the requested resource",
    }
    assert not object_not_found(_error(404, body))
    assert not object_not_found(_error(403, {"details": {"name": "w"}}))
    broken = ApiException(status=404, reason="Not Found")
    broken.body = "<html>not json</html>"
    assert not object_not_found(broken)
