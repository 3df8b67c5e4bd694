"""kcp mode: workspaces, APIExports, APIBindings and the APIExport virtual workspace (issue 4)."""

from __future__ import annotations

import base64
import json
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.support.devcluster import DevclusterProcess, Kubectl, start_devcluster
from tests.support.kcp import create_in as _create
from tests.support.kcp import in_workspace as _in
from tests.support.kcp import workspace_manifest as _workspace

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process

ADMIN_TOKEN = "admin-token"
AGENT_TOKEN = "agent-token"
STRANGER_TOKEN = "stranger-token"
GROUP = "widgets.example.io"

SCHEMA = {
    "apiVersion": "apis.kcp.io/v1alpha1",
    "kind": "APIResourceSchema",
    "metadata": {"name": "v1.widgets.widgets.example.io"},
    "spec": {
        "group": GROUP,
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def kcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    server = start_devcluster(
        tmp_path_factory.mktemp("kcp"),
        "--kcp",
        "--token",
        f"admin={ADMIN_TOKEN}",
        "--token",
        f"agent={AGENT_TOKEN}",
        "--token",
        f"stranger={STRANGER_TOKEN}",
    )
    yield server
    server.stop()


def _ca_file(server: DevclusterProcess) -> str:
    path = server.kubeconfig.with_name("ca.crt")
    if not path.exists():
        cluster = yaml.safe_load(server.kubeconfig.read_text())["clusters"][0]["cluster"]
        path.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    return str(path)


def api(server: DevclusterProcess, path: str, token: str = ADMIN_TOKEN) -> client.ApiClient:
    """The official client against ``<server><path>`` (a workspace or virtual workspace URL)."""
    config = client.Configuration()
    config.host = server.url + path
    config.api_key = {"authorization": token}
    config.api_key_prefix = {"authorization": "Bearer"}
    config.ssl_ca_cert = _ca_file(server)
    return client.ApiClient(config)


def _objects(server: DevclusterProcess, path: str, token: str = ADMIN_TOKEN) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api(server, path, token))


@pytest.fixture(scope="module")
def kubectl_kcp(kcp: DevclusterProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kcp.kubeconfig, tmp_path_factory.mktemp("kcp-cache"))


@pytest.fixture(scope="module")
def org(kubectl_kcp: Kubectl, kcp: DevclusterProcess) -> dict[str, str]:
    """root:org with team-1, team-2 and team-3; returns workspace path -> logical-cluster name."""
    kubectl_kcp.run("create", "-f", "-", stdin=_workspace("org"))
    for team in ("team-1", "team-2", "team-3"):
        _in(kubectl_kcp, "root:org", "create", "-f", "-", stdin=_workspace(team))
    names = {}
    for path in ("root:org", "root:org:team-1", "root:org:team-2", "root:org:team-3"):
        cluster = json.loads(_in(kubectl_kcp, path, "get", "logicalclusters", "cluster", "-o", "json").stdout)
        assert cluster["metadata"]["annotations"]["kcp.io/path"] == path
        assert len(cluster["metadata"]["annotations"]["kcp.io/cluster"]) == 16
        assert cluster["status"]["phase"] == "Ready"
        names[path] = cluster["metadata"]["annotations"]["kcp.io/cluster"]
    return names


@pytest.fixture(scope="module")
def export(kubectl_kcp: Kubectl, org: dict[str, str], kcp: DevclusterProcess) -> dict[str, Any]:
    """An APIResourceSchema and APIExport in root:org, with RBAC giving the agent its content."""
    _create(kubectl_kcp, "root:org", SCHEMA)
    _create(
        kubectl_kcp,
        "root:org",
        {
            "apiVersion": "apis.kcp.io/v1alpha1",
            "kind": "APIExport",
            "metadata": {"name": "widgets"},
            "spec": {
                "latestResourceSchemas": [SCHEMA["metadata"]["name"]],
                "permissionClaims": [{"group": "", "resource": "secrets", "all": True}],
            },
        },
    )
    _create(
        kubectl_kcp,
        "root:org",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "widgets-content"},
            "rules": [
                {
                    "apiGroups": ["apis.kcp.io"],
                    "resources": ["apiexports/content"],
                    "resourceNames": ["widgets"],
                    "verbs": ["*"],
                }
            ],
        },
    )
    _create(
        kubectl_kcp,
        "root:org",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "agent-content"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "widgets-content",
            },
            "subjects": [{"kind": "User", "name": "agent"}],
        },
    )
    return json.loads(_in(kubectl_kcp, "root:org", "get", "apiexport", "widgets", "-o", "json").stdout)


def _bind(kubectl: Kubectl, workspace: str, accept_secrets: bool = False) -> None:
    claims = (
        [{"group": "", "resource": "secrets", "all": True, "state": "Accepted"}] if accept_secrets else []
    )
    _in(
        kubectl,
        workspace,
        "apply",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "apis.kcp.io/v1alpha1",
                "kind": "APIBinding",
                "metadata": {"name": "widgets"},
                "spec": {
                    "reference": {"export": {"path": "root:org", "name": "widgets"}},
                    "permissionClaims": claims,
                },
            }
        ),
    )


def _slice_urls(kubectl: Kubectl) -> list[str]:
    got = json.loads(
        _in(kubectl, "root:org", "get", "apiexportendpointslice", "widgets", "-o", "json").stdout
    )
    return [e["url"] for e in got.get("status", {}).get("endpoints", [])]


@pytest.fixture(scope="module")
def bound(kubectl_kcp: Kubectl, export: dict[str, Any], org: dict[str, str]) -> str:
    """Both teams bind the export; returns the virtual workspace URL path."""
    assert _slice_urls(kubectl_kcp) == []
    _bind(kubectl_kcp, "root:org:team-1")
    _bind(kubectl_kcp, "root:org:team-2")
    urls = _slice_urls(kubectl_kcp)
    assert len(urls) == 1
    return "/" + urls[0].split("/", 3)[3]


def test_workspaces_resolve_by_name_and_path(kubectl_kcp: Kubectl, org: dict[str, str]) -> None:
    by_name = json.loads(
        _in(kubectl_kcp, org["root:org:team-1"], "get", "ns", "default", "-o", "json").stdout
    )
    assert by_name["metadata"]["annotations"]["kcp.io/cluster"] == org["root:org:team-1"]
    workspaces = json.loads(_in(kubectl_kcp, "root:org", "get", "workspaces", "-o", "json").stdout)["items"]
    team = next(w for w in workspaces if w["metadata"]["name"] == "team-1")
    assert team["spec"]["cluster"] == org["root:org:team-1"]
    assert team["spec"]["URL"].endswith("/clusters/root:org:team-1") and team["status"]["phase"] == "Ready"
    root = json.loads(kubectl_kcp.run("get", "logicalclusters", "cluster", "-o", "json").stdout)
    assert "kcp.io/path" not in root["metadata"].get("annotations", {})


def test_workspaces_are_isolated(kubectl_kcp: Kubectl, org: dict[str, str]) -> None:
    _in(kubectl_kcp, "root:org:team-1", "create", "configmap", "only-in-team-1")
    missing = _in(kubectl_kcp, "root:org:team-2", "get", "configmap", "only-in-team-1", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_workspace_namespaces_get_kube_root_ca(
    kubectl_kcp: Kubectl, kcp: DevclusterProcess, org: dict[str, str]
) -> None:
    """kcp runs kube's root-ca-cert-publisher in every logical cluster too."""
    published = _in(kubectl_kcp, "root:org:team-3", "get", "configmap", "kube-root-ca.crt", "-o", "json")
    assert json.loads(published.stdout)["data"] == {"ca.crt": Path(_ca_file(kcp)).read_text()}


def test_wildcard_cluster_allows_only_list_and_watch(kcp: DevclusterProcess, org: dict[str, str]) -> None:
    core = client.CoreV1Api(api(kcp, "/clusters/*"))
    names = {(n.metadata.annotations["kcp.io/cluster"], n.metadata.name) for n in core.list_namespace().items}
    assert (org["root:org:team-1"], "default") in names and (org["root:org:team-2"], "default") in names
    with pytest.raises(ApiException) as refused:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="x")))
    assert refused.value.status == 405


def test_export_identity_and_endpoint_slice(export: dict[str, Any], kubectl_kcp: Kubectl) -> None:
    identity = export["status"]["identityHash"]
    assert len(identity) == 64 and int(identity, 16) >= 0
    assert export["spec"]["identity"]["secretRef"] == {"namespace": "kcp-system", "name": "widgets"}
    assert export["metadata"]["annotations"]["kcp.io/path"] == "root:org"
    as_v2 = json.loads(
        _in(kubectl_kcp, "root:org", "get", "apiexports.v1alpha2.apis.kcp.io", "widgets", "-o", "json").stdout
    )
    assert as_v2["spec"]["resources"] == [
        {"name": "widgets", "group": GROUP, "schema": SCHEMA["metadata"]["name"], "storage": {"crd": {}}}
    ]
    assert as_v2["spec"]["permissionClaims"] == [{"group": "", "resource": "secrets", "verbs": ["*"]}]


def test_binding_serves_the_schema_in_the_workspace(
    kubectl_kcp: Kubectl, bound: str, org: dict[str, str], export: dict[str, Any]
) -> None:
    binding = json.loads(
        _in(kubectl_kcp, "root:org:team-1", "get", "apibinding", "widgets", "-o", "json").stdout
    )
    assert binding["status"]["phase"] == "Bound"
    assert binding["status"]["apiExportClusterName"] == org["root:org"]
    assert (
        binding["status"]["boundResources"][0]["schema"]["identityHash"] == export["status"]["identityHash"]
    )
    assert {c["type"]: c["status"] for c in binding["status"]["conditions"]}["Ready"] == "True"
    resources = _in(
        kubectl_kcp, "root:org:team-1", "api-resources", f"--api-group={GROUP}", "--no-headers"
    ).stdout
    assert resources.split()[0] == "widgets"
    unbound = _in(
        kubectl_kcp, "root:org:team-3", "api-resources", f"--api-group={GROUP}", "--no-headers"
    ).stdout
    assert unbound.strip() == ""


def _widget(name: str, size: int) -> str:
    return json.dumps(
        {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}}
    )


def test_virtual_workspace_lists_and_watches_across_bindings(
    kubectl_kcp: Kubectl, kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    wildcard = _objects(kcp, bound + "/clusters/*", AGENT_TOKEN)
    start = wildcard.list_cluster_custom_object(GROUP, "v1", "widgets")["metadata"]["resourceVersion"]
    _in(kubectl_kcp, "root:org:team-1", "create", "-f", "-", stdin=_widget("w1", 1))
    _in(kubectl_kcp, "root:org:team-2", "create", "-f", "-", stdin=_widget("w2", 2))
    listed = wildcard.list_cluster_custom_object(GROUP, "v1", "widgets")["items"]
    seen = {(i["metadata"]["annotations"]["kcp.io/cluster"], i["metadata"]["name"]) for i in listed}
    assert {(org["root:org:team-1"], "w1"), (org["root:org:team-2"], "w2")} <= seen
    events = [
        (e["type"], e["object"]["metadata"]["annotations"]["kcp.io/cluster"], e["object"]["metadata"]["name"])
        for e in watch.Watch().stream(
            wildcard.list_cluster_custom_object,
            GROUP,
            "v1",
            "widgets",
            resource_version=start,
            timeout_seconds=1,
        )
    ]
    assert ("ADDED", org["root:org:team-1"], "w1") in events and (
        "ADDED",
        org["root:org:team-2"],
        "w2",
    ) in events
    with pytest.raises(ApiException) as namespaced:
        wildcard.list_namespaced_custom_object(GROUP, "v1", "default", "widgets")
    assert namespaced.value.status == 400


def test_status_through_the_per_cluster_url(
    kubectl_kcp: Kubectl, kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    _in(kubectl_kcp, "root:org:team-1", "create", "-f", "-", stdin=_widget("with-status", 3))
    team = _objects(kcp, f"{bound}/clusters/{org['root:org:team-1']}", AGENT_TOKEN)
    team.patch_namespaced_custom_object_status(
        GROUP, "v1", "default", "widgets", "with-status", {"status": {"ready": True}}
    )
    got = json.loads(_in(kubectl_kcp, "root:org:team-1", "get", "widget", "with-status", "-o", "json").stdout)
    assert got["status"] == {"ready": True}


def test_live_watch_through_the_virtual_workspace(
    kubectl_kcp: Kubectl, kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    wildcard = _objects(kcp, bound + "/clusters/*", AGENT_TOKEN)
    start = wildcard.list_cluster_custom_object(GROUP, "v1", "widgets")["metadata"]["resourceVersion"]
    seen: list[str] = []
    stream = watch.Watch()

    def consume() -> None:
        for event in stream.stream(
            wildcard.list_cluster_custom_object,
            GROUP,
            "v1",
            "widgets",
            resource_version=start,
            timeout_seconds=10,
        ):
            seen.append(event["object"]["metadata"]["name"])
            stream.stop()

    thread = threading.Thread(target=consume)
    thread.start()
    _in(kubectl_kcp, "root:org:team-2", "create", "-f", "-", stdin=_widget("live", 9))
    thread.join(timeout=10)
    assert seen == ["live"]


def test_unbound_workspace_and_strangers_are_refused(
    kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    outsider = _objects(kcp, f"{bound}/clusters/{org['root:org:team-3']}", AGENT_TOKEN)
    with pytest.raises(ApiException) as not_bound:
        outsider.list_namespaced_custom_object(GROUP, "v1", "default", "widgets")
    assert not_bound.value.status == 403
    stranger = _objects(kcp, bound + "/clusters/*", STRANGER_TOKEN)
    with pytest.raises(ApiException) as no_content:
        stranger.list_cluster_custom_object(GROUP, "v1", "widgets")
    assert no_content.value.status == 403
    with pytest.raises(ApiException) as no_workspace:
        client.CoreV1Api(api(kcp, "/clusters/root:org", STRANGER_TOKEN)).list_namespace()
    assert no_workspace.value.status == 403


def _raw_get(server: DevclusterProcess, path: str, token: str) -> tuple[int, Any]:
    """GET ``path`` with a bearer token: (status, parsed JSON body)."""
    request = urllib.request.Request(server.url + path, headers={"Authorization": f"Bearer {token}"})
    context = ssl.create_default_context(cafile=_ca_file(server))
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_virtual_workspace_discovery_requires_the_content_permission(
    kcp: DevclusterProcess, bound: str
) -> None:
    for path in ("/api", "/apis", f"/apis/{GROUP}", f"/apis/{GROUP}/v1", "/openapi/v3"):
        status, _ = _raw_get(kcp, f"{bound}/clusters/*{path}", AGENT_TOKEN)
        assert status == 200, path
        status, body = _raw_get(kcp, f"{bound}/clusters/*{path}", STRANGER_TOKEN)
        assert status == 403, path
        assert '"apiexports/content"' in body["message"]


@pytest.mark.parametrize("path", ["/debug/requests", "/debug/watches"])
def test_debug_paths_are_for_the_admin_only(kcp: DevclusterProcess, path: str) -> None:
    status, figures = _raw_get(kcp, path, ADMIN_TOKEN)
    assert status == 200 and (figures["GET"] > 0 if path == "/debug/requests" else figures["open"] >= 0)
    status, body = _raw_get(kcp, path, AGENT_TOKEN)
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == f'forbidden: User "agent" cannot get path "{path}"'
    status, body = _raw_get(kcp, path, "not-a-token")
    assert status == 401 and body["reason"] == "Unauthorized"


def test_claimed_secrets_visible_only_after_acceptance(
    kubectl_kcp: Kubectl, kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    _in(kubectl_kcp, "root:org:team-1", "create", "secret", "generic", "creds", "--from-literal=k=v")
    team = client.CoreV1Api(api(kcp, f"{bound}/clusters/{org['root:org:team-1']}", AGENT_TOKEN))
    with pytest.raises(ApiException) as unclaimed:
        team.read_namespaced_secret("creds", "default")
    assert unclaimed.value.status == 403
    wildcard = client.CoreV1Api(api(kcp, bound + "/clusters/*", AGENT_TOKEN))
    assert "creds" not in {s.metadata.name for s in wildcard.list_secret_for_all_namespaces().items}
    _bind(kubectl_kcp, "root:org:team-1", accept_secrets=True)
    secret = team.read_namespaced_secret("creds", "default")
    assert any(k.startswith("claimed.internal.apis.kcp.io/") for k in secret.metadata.labels)
    assert "creds" in {s.metadata.name for s in wildcard.list_secret_for_all_namespaces().items}


def test_apibindings_are_read_only_in_the_virtual_workspace(
    kcp: DevclusterProcess, bound: str, org: dict[str, str]
) -> None:
    team = _objects(kcp, f"{bound}/clusters/{org['root:org:team-1']}", AGENT_TOKEN)
    assert team.get_cluster_custom_object("apis.kcp.io", "v1alpha1", "apibindings", "widgets")
    with pytest.raises(ApiException) as refused:
        team.delete_cluster_custom_object("apis.kcp.io", "v1alpha1", "apibindings", "widgets")
    assert refused.value.status == 403


def test_schema_spec_is_immutable(kubectl_kcp: Kubectl, export: dict[str, Any]) -> None:
    changed = _in(
        kubectl_kcp,
        "root:org",
        "patch",
        "apiresourceschema",
        SCHEMA["metadata"]["name"],
        "--type",
        "merge",
        "-p",
        '{"spec":{"scope":"Cluster"}}',
        check=False,
    )
    assert changed.returncode != 0 and "immutable" in changed.stderr


def test_crd_and_binding_for_the_same_resource_conflict(
    kubectl_kcp: Kubectl, export: dict[str, Any], bound: str, tmp_path: Path
) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    denied = _in(kubectl_kcp, "root:org:team-1", "create", "-f", "-", stdin=json.dumps(crd), check=False)
    assert denied.returncode != 0 and "bound by APIBinding" in denied.stderr
    _create(kubectl_kcp, "root:org:team-3", crd)
    _bind(kubectl_kcp, "root:org:team-3")
    binding = json.loads(
        _in(kubectl_kcp, "root:org:team-3", "get", "apibinding", "widgets", "-o", "json").stdout
    )
    conditions = {c["type"]: c for c in binding["status"]["conditions"]}
    assert binding["status"]["phase"] == "Binding"
    assert conditions["Ready"]["status"] == "False" and conditions["Ready"]["reason"] == "NamingConflicts"


def test_service_account_token_works_in_its_workspace_with_its_rights_only(
    kcp: DevclusterProcess, org: dict[str, str]
) -> None:
    team = api(kcp, "/clusters/root:org:team-1")
    core, rbac = client.CoreV1Api(team), client.RbacAuthorizationV1Api(team)
    assert core.read_namespaced_service_account("default", "default").metadata.uid
    core.create_namespaced_service_account("default", {"metadata": {"name": "syncer"}})
    rbac.create_cluster_role(
        {
            "metadata": {"name": "syncer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}],
        }
    )
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "syncer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "syncer"},
            "subjects": [{"kind": "ServiceAccount", "name": "syncer", "namespace": "default"}],
        }
    )
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = core.create_namespaced_service_account_token("syncer", "default", request).status.token
    for address in ("/clusters/root:org:team-1", f"/clusters/{org['root:org:team-1']}"):
        as_syncer = client.CoreV1Api(api(kcp, address, token))
        name = "by-" + address.rsplit("/", 1)[1].replace(":", "-")
        assert as_syncer.create_namespaced_config_map("default", {"metadata": {"name": name}}).metadata.uid
        with pytest.raises(ApiException) as secrets:
            as_syncer.list_namespaced_secret("default")
        assert secrets.value.status == 403
    for elsewhere in ("/clusters/root:org:team-2", "/clusters/root:org", "/clusters/*"):
        with pytest.raises(ApiException) as denied:
            client.CoreV1Api(api(kcp, elsewhere, token)).list_config_map_for_all_namespaces()
        assert denied.value.status == 403, elsewhere
    assert client.CoreV1Api(api(kcp, "/clusters/root:org:team-3")).read_namespaced_service_account(
        "default", "default"
    )
