"""Publish mode at parity with api-syncagent, end to end: ``spec.mutation`` applied by the sync, and
``spec.related`` objects synced both ways (the cert-manager case of docs/architecture.md §13: a Secret
created in the service cluster for a Certificate appears in the workspace; a kcp ConfigMap goes down), with
cleanup when the primary goes. Two devclusters, real Redis, real worker, beat and watch processes."""

from __future__ import annotations

import base64
import json
from typing import Any

from syncflow.kube.jsonapi import JsonApi
from syncflow.sync import state
from syncflow.sync.naming import sha1_hex
from tests.support.publish_env import APIS, CLEANUP, EXPORT, PUBLISHED, Published, PublishEnv, cluster_of, ok
from tests.support.waiting import wait_for

TEAM = "root:org:team-1"


def accept_claims(env: PublishEnv, *resources: str) -> None:
    """The workspace owner accepts the permission claims for these core resources in team-1's binding."""
    team = env.workspace(TEAM)
    binding = team.get(f"{APIS}/apibindings/{EXPORT}")
    claims = binding["spec"].get("permissionClaims") or []
    have = {c["resource"] for c in claims}
    claims += [
        {"group": "", "resource": r, "all": True, "state": "Accepted"} for r in resources if r not in have
    ]
    team.replace(
        f"{APIS}/apibindings/{EXPORT}", {**binding, "spec": {**binding["spec"], "permissionClaims": claims}}
    )


def get_or_none(api: JsonApi, path: str) -> dict[str, Any] | None:
    return api.get(path) if ok(api, path) else None


def state_entry(env: PublishEnv, cluster: str, name: str, entry: str) -> dict[str, Any]:
    """The decoded ``entry`` of the state Secret of kcp object default/<name> in ``cluster``, once written."""

    def found() -> dict[str, Any] | None:
        secrets = env.service.get(
            "/api/v1/namespaces/syncflow/secrets",
            labelSelector=f"syncagent.kcp.io/remote-object-cluster={cluster},"
            f"syncagent.kcp.io/remote-object-name-hash={sha1_hex(name)}",
        )["items"]
        raw = (secrets[0].get("data") or {}).get(entry) if secrets else None
        return json.loads(base64.b64decode(raw)) if raw else None

    return wait_for(found, timeout=30, what=lambda: f"state entry {entry} of {name}\n{env.agent.logs()}")


def test_each_mutation_kind_shapes_the_copy_the_state_and_the_returned_status(
    publish_env: PublishEnv,
) -> None:
    env = publish_env
    g = Published(
        env,
        "mutated",
        "mutated.example.com",
        "mutateds",
        "Mutated",
        mutation={
            "spec": [
                {"delete": {"path": "spec.internal"}},
                {"regex": {"path": "spec.secretName", "pattern": "(.+)", "replacement": "cert-$1"}},
                {
                    "template": {
                        "path": "spec.owner",
                        "template": "{{ .Value.String }}@{{ .RemoteObject.metadata.namespace }}",
                    }
                },
                {"cel": {"path": "spec.replicas", "expression": "self.spec.replicas * 2"}},
            ],
            "status": [
                {"delete": {"path": "status.internalRef"}},
                {"cel": {"path": "status.ready", "expression": "self.status.phase == 'Ready'"}},
            ],
        },
    )
    cluster = cluster_of(env, "team-1")
    g.create("team-1", "m1", {"secretName": "web", "owner": "alice", "replicas": 3, "internal": {"x": 1}})
    copy = g.wait_copy(cluster, "m1")
    # the template read the copy-to-be (its namespace is the cluster, by the default naming)
    mutated = {"secretName": "cert-web", "owner": f"alice@{cluster}", "replicas": 6}
    assert copy["spec"] == mutated
    # the state remembers the mutated object
    assert state_entry(env, cluster, "m1", state.state_key(cluster, "", "default", "m1"))["spec"] == mutated
    team = env.workspace(TEAM)
    assert team.get(g.kcp_path(name="m1"))["spec"]["secretName"] == "web"  # kcp keeps what the user wrote
    local = (
        f"/apis/{g.group}/v1/namespaces/{copy['metadata']['namespace']}/{g.plural}/{copy['metadata']['name']}"
    )
    env.service.merge_patch(f"{local}/status", {"status": {"phase": "Ready", "internalRef": "secret-123"}})
    wait_for(
        lambda: team.get(g.kcp_path(name="m1")).get("status") == {"phase": "Ready", "ready": True},
        timeout=30,
        what=lambda: f"the mutated status in kcp\n{env.agent.logs()}",
    )
    # a later kcp change goes through the same mutations; a local-only field survives the merge
    env.service.merge_patch(local, {"spec": {"localOnly": True}})
    team.merge_patch(g.kcp_path(name="m1"), {"spec": {"replicas": 5}})
    copy = g.wait_copy(cluster, "m1", check=lambda c: c["spec"].get("replicas") == 10)
    assert copy["spec"] == {**mutated, "replicas": 10, "localOnly": True}
    # a mutation that fails parks the key with the step's name and reason
    g.create("team-1", "m2", {"secretName": "x", "owner": "bob"})
    key = f"sync/mutated/{cluster}/default/m2"
    failure = wait_for(lambda: env.parked(key), timeout=60, what=lambda: f"{key} parked\n{env.agent.logs()}")
    assert "mutation.spec[3]: failed to evaluate CEL expression" in failure["error"]
    assert g.copy_of(cluster, "m2") is None


def test_a_secret_made_for_a_certificate_in_the_service_cluster_appears_in_the_workspace(
    publish_env: PublishEnv,
) -> None:
    """docs/architecture.md §13's cert-manager case, the test playing cert-manager (and not setting owner
    references, as cert-manager does by default: the related index finds the Secret's primary)."""
    env = publish_env
    accept_claims(env, "secrets", "configmaps")
    g = Published(
        env,
        "certs",
        "certs.example.com",
        "certificates",
        "Certificate",
        mutation={
            "spec": [{"regex": {"path": "spec.secretName", "pattern": "(.+)", "replacement": "cert-$1"}}]
        },
        related=[
            {
                "identifier": "tls-secret",
                "origin": "service",
                "group": "",
                "version": "v1",
                "resource": "secrets",
                "object": {"reference": {"path": "spec.secretName"}},
                "cleanup": True,
            }
        ],
    )
    cluster = cluster_of(env, "team-1")
    team = env.workspace(TEAM)
    g.create("team-1", "web", {"secretName": "web-tls", "dnsNames": ["web.example.com"]})
    copy = g.wait_copy(cluster, "web")
    namespace, local_secret = copy["metadata"]["namespace"], copy["spec"]["secretName"]
    assert local_secret == "cert-web-tls"
    # cert-manager sees the Certificate and issues the Secret next to it
    tls = {"tls.crt": base64.b64encode(b"CERT-1").decode(), "tls.key": base64.b64encode(b"KEY").decode()}
    env.service.create(
        f"/api/v1/namespaces/{namespace}/secrets",
        {
            "metadata": {"name": local_secret, "labels": {"issuer": "ca"}},
            "type": "kubernetes.io/tls",
            "data": tls,
        },
    )
    kcp_secret = "/api/v1/namespaces/default/secrets/web-tls"  # named by the reference read in kcp
    up = wait_for(
        lambda: get_or_none(team, kcp_secret),
        timeout=30,
        what=lambda: f"the Secret in the workspace\n{env.agent.logs()}",
    )
    assert (
        up["data"] == tls and up["type"] == "kubernetes.io/tls" and up["metadata"]["labels"]["issuer"] == "ca"
    )
    assert not [k for k in up["metadata"].get("labels") or {} if k.startswith("syncagent.kcp.io/")]
    annotation = "related-resources.syncagent.kcp.io/tls-secret.0"
    recorded = wait_for(  # written once the Secret is up
        lambda: (team.get(g.kcp_path(name="web"))["metadata"].get("annotations") or {}).get(annotation),
        timeout=30,
        what=lambda: f"the related-resource annotation on the Certificate\n{env.agent.logs()}",
    )
    assert json.loads(recorded) == {
        "namespace": "default",
        "name": "web-tls",
        "apiVersion": "v1",
        "kind": "Secret",
    }
    assert state_entry(env, cluster, "web", state.state_key("", "", namespace, local_secret))["data"] == tls
    # renewal: the new certificate flows up
    renewed = {**tls, "tls.crt": base64.b64encode(b"CERT-2").decode()}
    env.service.merge_patch(f"/api/v1/namespaces/{namespace}/secrets/{local_secret}", {"data": renewed})
    wait_for(
        lambda: team.get(kcp_secret)["data"] == renewed,
        timeout=30,
        what=lambda: f"the renewed Secret in the workspace\n{env.agent.logs()}",
    )
    # the Certificate goes: its copy in kcp is cleaned up (cleanup: true), then the primary
    team.delete(g.kcp_path(name="web"))
    wait_for(
        lambda: not ok(team, g.kcp_path(name="web")),
        timeout=30,
        what=lambda: f"the Certificate to be gone\n{env.agent.logs()}",
    )
    assert not ok(team, kcp_secret)
    assert g.copy_of(cluster, "web") is None
    # the origin is cert-manager's: syncflow never deletes it (its owner's garbage collection does)
    assert ok(env.service, f"/api/v1/namespaces/{namespace}/secrets/{local_secret}")


def test_a_configmap_in_the_workspace_goes_down_with_its_primary(publish_env: PublishEnv) -> None:
    env = publish_env
    accept_claims(env, "secrets", "configmaps")
    g = Published(
        env,
        "apps",
        "apps.example.com",
        "apps",
        "App",
        related=[
            {
                "identifier": "settings",
                "origin": "kcp",
                "group": "",
                "version": "v1",
                "resource": "configmaps",
                "object": {"reference": {"path": "spec.configMap"}},
                "mutation": {"spec": [{"delete": {"path": "data.secret"}}]},
            }
        ],
    )
    cluster = cluster_of(env, "team-1")
    team = env.workspace(TEAM)
    kcp_cm = "/api/v1/namespaces/default/configmaps/shop-settings"
    team.create(
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "shop-settings"}, "data": {"color": "blue", "secret": "s3"}},
    )
    g.create("team-1", "shop", {"configMap": "shop-settings"})
    namespace = g.wait_copy(cluster, "shop")["metadata"]["namespace"]
    local_cm = f"/api/v1/namespaces/{namespace}/configmaps/shop-settings"

    def local_data() -> dict[str, str] | None:
        found = get_or_none(env.service, local_cm)
        return found.get("data") if found else None

    wait_for(
        lambda: local_data() == {"color": "blue"},
        timeout=30,
        what=lambda: f"the ConfigMap in the service cluster\n{env.agent.logs()}",
    )
    assert CLEANUP in team.get(kcp_cm)["metadata"]["finalizers"]
    # changes flow down; a key added in the service cluster survives (three-way merge)
    env.service.merge_patch(local_cm, {"data": {"local": "yes"}})
    team.merge_patch(kcp_cm, {"data": {"color": "green"}})
    wait_for(
        lambda: local_data() == {"color": "green", "local": "yes"},
        timeout=30,
        what=lambda: f"the changed ConfigMap\n{env.agent.logs()}",
    )
    # deleting the kcp ConfigMap deletes its copy first, then lets it go
    team.delete(kcp_cm)
    wait_for(
        lambda: not ok(team, kcp_cm), timeout=30, what=lambda: f"the kcp ConfigMap gone\n{env.agent.logs()}"
    )
    assert not ok(env.service, local_cm)
    # made again, it comes back; when the App goes, the copy goes and the kcp ConfigMap is released
    team.create(
        "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "shop-settings"}, "data": {"v": "2"}}
    )
    wait_for(
        lambda: local_data() == {"v": "2"}, timeout=30, what=lambda: f"the copy again\n{env.agent.logs()}"
    )
    team.delete(g.kcp_path(name="shop"))
    wait_for(
        lambda: not ok(team, g.kcp_path(name="shop")),
        timeout=30,
        what=lambda: f"the App to be gone\n{env.agent.logs()}",
    )
    assert not ok(env.service, local_cm)
    assert CLEANUP not in (team.get(kcp_cm)["metadata"].get("finalizers") or [])
    # turning sync off releases the related objects the rule held in kcp too
    g.create("team-1", "shop", {"configMap": "shop-settings"})
    wait_for(
        lambda: CLEANUP in (team.get(kcp_cm)["metadata"].get("finalizers") or []),
        timeout=30,
        what=lambda: f"the finalizer on the ConfigMap again\n{env.agent.logs()}",
    )
    env.service.merge_patch(f"{PUBLISHED}/apps", {"spec": {"synchronization": {"enabled": False}}})
    wait_for(
        lambda: CLEANUP not in (team.get(kcp_cm)["metadata"].get("finalizers") or []),
        timeout=60,
        what=lambda: f"the ConfigMap released\n{env.agent.logs()}",
    )
    team.delete(kcp_cm)
    assert not ok(team, kcp_cm)  # nothing holds it any more


def test_objects_of_a_published_crd_found_by_label_selector_go_up_with_their_status(
    publish_env: PublishEnv,
) -> None:
    """Any resource, not only Secrets: DatabaseCredentials (a CRD published with sync disabled, so kcp
    serves it) made by an operator for a Database, found by a templated label selector, renamed by a
    rewrite template, mapped to their primary by owner reference, with their status."""
    env = publish_env
    Published(
        env, "creds", "creds.example.com", "credentials", "Credential", synchronization={"enabled": False}
    )
    g = Published(
        env,
        "dbs",
        "dbs.example.com",
        "databases",
        "Database",
        related=[
            {
                "identifier": "credentials",
                "origin": "service",
                "group": "creds.example.com",
                "version": "v1",
                "resource": "credentials",
                "object": {
                    "selector": {
                        "matchLabels": {"db.example.com/owner": "{{ .LocalObject.metadata.name }}"},
                        "rewrite": {
                            "template": {"template": "{{ .RemoteObject.metadata.name }}-{{ .Value }}"}
                        },
                    }
                },
                "watch": {"byOwner": {}},
                "syncStatus": True,
            }
        ],
    )
    cluster = cluster_of(env, "team-1")
    team = env.workspace(TEAM)
    g.create("team-1", "orders", {"engine": "postgres"})
    copy = g.wait_copy(cluster, "orders")
    namespace, local_name = copy["metadata"]["namespace"], copy["metadata"]["name"]
    owner = {
        "apiVersion": "dbs.example.com/v1",
        "kind": "Database",
        "name": local_name,
        "uid": copy["metadata"]["uid"],
    }
    local_creds = f"/apis/creds.example.com/v1/namespaces/{namespace}/credentials"
    for user in ("admin", "reader"):  # the operator makes them, labelled and owned
        env.service.create(
            local_creds,
            {
                "apiVersion": "creds.example.com/v1",
                "kind": "Credential",
                "metadata": {
                    "name": user,
                    "labels": {"db.example.com/owner": local_name},
                    "ownerReferences": [owner],
                },
                "spec": {"user": user},
            },
        )
    env.service.merge_patch(f"{local_creds}/admin/status", {"status": {"phase": "Issued"}})
    kcp_creds = "/apis/creds.example.com/v1/namespaces/default/credentials"

    def in_kcp(name: str) -> dict[str, Any] | None:
        return get_or_none(team, f"{kcp_creds}/{name}")

    admin = wait_for(
        lambda: (c := in_kcp("orders-admin")) is not None and c.get("status") == {"phase": "Issued"} and c,
        timeout=30,
        what=lambda: f"the credential with its status in the workspace\n{env.agent.logs()}",
    )
    assert admin["spec"] == {"user": "admin"} and "ownerReferences" not in admin["metadata"]
    wait_for(
        lambda: (in_kcp("orders-reader") or {}).get("spec") == {"user": "reader"},
        timeout=30,
        what=lambda: f"the reader in the workspace\n{env.agent.logs()}",
    )
    # a status change of an origin object reaches kcp (the owner reference maps it to its Database)
    env.service.merge_patch(f"{local_creds}/reader/status", {"status": {"phase": "Rotated"}})
    wait_for(
        lambda: (in_kcp("orders-reader") or {}).get("status") == {"phase": "Rotated"},
        timeout=30,
        what=lambda: f"the reader's status in the workspace\n{env.agent.logs()}",
    )
    # without cleanup, the copies stay when the Database goes
    team.delete(g.kcp_path(name="orders"))
    wait_for(
        lambda: not ok(team, g.kcp_path(name="orders")),
        timeout=30,
        what=lambda: f"the Database to be gone\n{env.agent.logs()}",
    )
    assert in_kcp("orders-admin") is not None and in_kcp("orders-reader") is not None
