"""kube-controller-manager's root-ca-cert-publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace.

Each namespace (the initial ones too, and in every kcp workspace, as kcp runs the same controller) gets
the ConfigMap with key ``ca.crt`` holding the CA bundle that verifies the server (empty on a server
without TLS). Deleting it from a namespace that is not terminating creates it again; changing it
restores its data and description.
"""

from __future__ import annotations

from collections.abc import Callable

from syncflow.devcluster.crud import Objects, Target
from syncflow.devcluster.registry import Registry
from syncflow.devcluster.store import Obj
from syncflow.util.jsonvalues import deep_copy

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters."
)


def _is(t: Target, plural: str) -> bool:
    return (t.rtype.group, t.rtype.plural) == ("", plural)


class RootCAPublisher:
    """Keeps ``kube-root-ca.crt`` in every namespace that is not terminating."""

    def __init__(self, objects: Objects, registry: Registry, ca_pem: Callable[[], str]) -> None:
        self.objects = objects
        self.registry = registry
        self.ca_pem = ca_pem
        objects.on_write.append(self._after_write)
        objects.on_remove.append(self._after_remove)

    def _target(self, cluster: str) -> Target:
        rtype = self.registry.by_group_resource(cluster, "", "configmaps")
        assert rtype is not None
        return Target(cluster, rtype, "v1")

    def _publish(self, cluster: str, namespace: str, current: Obj | None) -> None:
        """Create the ConfigMap, or restore its data and description."""
        data = {"ca.crt": self.ca_pem()}
        if current is None:
            body = {
                "metadata": {"name": ROOT_CA_CONFIGMAP, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}}
            }
            self.objects.create(self._target(cluster), namespace, {**body, "data": data})
            return
        annotations = current["metadata"].get("annotations") or {}
        if current.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        restored = deep_copy(current)
        restored["data"] = data
        restored["metadata"]["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
        self.objects.replace(self._target(cluster), current, restored)

    def _namespace_active(self, cluster: str, namespace: str) -> bool:
        found = self.objects.store.get(cluster, "", "namespaces", "", namespace)
        return found is not None and not found["metadata"].get("deletionTimestamp")

    def _after_write(self, t: Target, new: Obj, old: Obj | None) -> None:
        meta = new["metadata"]
        if _is(t, "namespaces") and old is None and not meta.get("deletionTimestamp"):
            self._publish(t.cluster, meta["name"], None)
        elif _is(t, "configmaps") and meta["name"] == ROOT_CA_CONFIGMAP and not meta.get("deletionTimestamp"):
            self._publish(t.cluster, meta["namespace"], new)

    def _after_remove(self, t: Target, obj: Obj) -> None:
        meta = obj["metadata"]
        removed_ours = _is(t, "configmaps") and meta["name"] == ROOT_CA_CONFIGMAP
        if removed_ours and self._namespace_active(t.cluster, meta["namespace"]):
            self._publish(t.cluster, meta["namespace"], None)
