"""The demo's steps against the running system: publish ``Database``, bind it, sync one object both ways.

Each step waits (with a deadline) for what syncflow is documented to do and returns a line for the user.
The demo plays the service-side controller itself: it writes a status on the local copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncflow.demo import manifests
from syncflow.demo.manifests import Obj
from syncflow.kube.clients import for_cluster
from syncflow.kube.jsonapi import JsonApi, resource_path
from syncflow.runtime.stack import Stack

APIS = "/apis/apis.kcp.io/v1alpha1"
WORKSPACES = "/apis/tenancy.kcp.io/v1alpha1/workspaces"
PUBLISHED = "/apis/syncagent.kcp.io/v1alpha1/publishedresources"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CLUSTER_LABEL = "syncagent.kcp.io/remote-object-cluster"
NAME_ANNOTATION = "syncagent.kcp.io/remote-object-name"
ORG = "root:org"
TEAM = "root:org:team"
SYNC_LOGS = ("watch", "worker")


@dataclass
class Scenario:
    """Clients of both clusters and the stack whose children must stay up while steps wait."""

    stack: Stack
    service: JsonApi
    kcp_root: JsonApi
    timeout: float = 60.0

    def workspace(self, path: str) -> JsonApi:
        """A client for one kcp workspace."""
        return JsonApi(for_cluster(self.kcp_root.api, path))

    def create_org(self) -> str:
        """Workspace ``root:org`` with the APIExport that syncflow will manage."""
        self.kcp_root.create(WORKSPACES, {"metadata": {"name": "org"}})
        self.workspace(ORG).create(f"{APIS}/apiexports", {"metadata": {"name": manifests.EXPORT}})
        return f"kcp: workspace {ORG} with APIExport {manifests.EXPORT}"

    def publish(self, agent_name: str) -> str:
        """Create the CRD and the PublishedResource; wait for the schema to be listed in the APIExport."""
        self.service.create(CRDS, manifests.database_crd())
        self.service.create(PUBLISHED, manifests.published_resource(agent_name))

        def schema() -> str | None:
            status = self.service.get(f"{PUBLISHED}/{manifests.PUBLISHED_RESOURCE}").get("status") or {}
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
            )
            return status.get("resourceSchemaName") if ready else None

        name = self.stack.wait(schema, self.timeout, "the PublishedResource to be Ready", SYNC_LOGS)
        self.stack.wait(
            lambda: name in (self._export().get("spec") or {}).get("latestResourceSchemas", []),
            self.timeout,
            f"APIExport {manifests.EXPORT} to list schema {name}",
            SYNC_LOGS,
        )
        return f"{manifests.KIND} published: schema {name} in APIExport {ORG}:{manifests.EXPORT}"

    def bind(self) -> str:
        """Create ``root:org:team`` and bind the export there, accepting its claims; returns the cluster."""
        self.workspace(ORG).create(WORKSPACES, {"metadata": {"name": "team"}})
        claims = (self._export().get("spec") or {}).get("permissionClaims") or []
        team = self.workspace(TEAM)
        team.create(f"{APIS}/apibindings", manifests.api_binding(ORG, claims))
        self.stack.wait(
            lambda: (
                (team.get(f"{APIS}/apibindings/{manifests.EXPORT}").get("status") or {}).get("phase")
                == "Bound"
            ),
            self.timeout,
            "the APIBinding to be Bound",
            SYNC_LOGS,
        )
        cluster = self.workspace(ORG).get(f"{WORKSPACES}/team")["spec"]["cluster"]
        return str(cluster)

    def create_object(self, name: str, engine: str = "postgres") -> None:
        """Create a ``Database`` in the team workspace's ``default`` namespace."""
        self.workspace(TEAM).create(_kcp_path(), manifests.database(name, engine))

    def local_copy(self, cluster: str, name: str) -> Obj:
        """Wait for the local copy of kcp object ``default/<name>`` in ``cluster``."""
        return self.stack.wait(
            lambda: self._find_copy(cluster, name),
            self.timeout,
            f"the local copy of {name} in the service cluster",
            SYNC_LOGS,
        )

    def return_status(self, copy: Obj, name: str) -> dict[str, Any]:
        """Write a status on the local copy (as the service's controller would); wait for it in kcp."""
        meta = copy["metadata"]
        status = {"phase": "Ready", "endpoint": f"{meta['name']}.{meta['namespace']}.svc:5432"}
        path = _local_path(meta["namespace"], meta["name"])
        self.service.merge_patch(f"{path}/status", {"status": status})
        team = self.workspace(TEAM)
        self.stack.wait(
            lambda: team.get(_kcp_path(name)).get("status") == status,
            self.timeout,
            f"the status of {name} to reach kcp",
            SYNC_LOGS,
        )
        return status

    def delete(self, cluster: str, name: str) -> None:
        """Delete the kcp object; wait for the local copy to go, then for the kcp object to go."""
        team = self.workspace(TEAM)
        team.delete(_kcp_path(name))
        self.stack.wait(
            lambda: self._find_copy(cluster, name) is None,
            self.timeout,
            f"the local copy of {name} to be deleted",
            SYNC_LOGS,
        )
        self.stack.wait(
            lambda: not team.exists(_kcp_path(name)), self.timeout, f"{name} to leave kcp", SYNC_LOGS
        )

    def _export(self) -> Obj:
        return self.workspace(ORG).get(f"{APIS}/apiexports/{manifests.EXPORT}")

    def _find_copy(self, cluster: str, name: str) -> Obj | None:
        items = self.service.get(_local_path(), labelSelector=f"{CLUSTER_LABEL}={cluster}").get("items") or []
        return next(
            (o for o in items if (o["metadata"].get("annotations") or {}).get(NAME_ANNOTATION) == name),
            None,
        )


def _kcp_path(name: str = "") -> str:
    return resource_path(manifests.GROUP, manifests.VERSION, manifests.PLURAL, "default", name)


def _local_path(namespace: str = "", name: str = "") -> str:
    return resource_path(manifests.GROUP, manifests.VERSION, manifests.PLURAL, namespace, name)
