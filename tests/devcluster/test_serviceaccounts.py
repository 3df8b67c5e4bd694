"""Issue 10 item 6: default ServiceAccounts, TokenRequest, token Secrets, and RBAC for their tokens."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.devcluster import DevclusterProcess, Kubectl
from tests.support.waiting import wait_for

RBAC = "rbac.authorization.k8s.io"


def _as(devcluster: DevclusterProcess, token: str) -> client.ApiClient:
    """The official client sending ``token``."""
    configuration = client.Configuration()
    configuration.host = devcluster.url
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)


@pytest.fixture
def robot(api_client: client.ApiClient, namespace: str) -> str:
    """A ServiceAccount ``robot`` in the test namespace that may get and list ConfigMaps there."""
    core, rbac = client.CoreV1Api(api_client), client.RbacAuthorizationV1Api(api_client)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "robot"}})
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "read-cm"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "robot-reads"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "read-cm"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": namespace}],
        },
    )
    return "robot"


@pytest.fixture
def other_namespace(api_client: client.ApiClient, namespace: str) -> Iterator[str]:
    name = namespace + "-b"
    client.CoreV1Api(api_client).create_namespace({"metadata": {"name": name}})
    yield name


def test_every_namespace_has_a_default_service_account_that_comes_back(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    for ns in ("default", "kube-system", "kube-public", namespace):
        assert core.read_namespaced_service_account("default", ns).metadata.uid
    first = core.read_namespaced_service_account("default", namespace).metadata.uid
    core.delete_namespaced_service_account("default", namespace)
    again = core.read_namespaced_service_account("default", namespace)
    assert again.metadata.uid != first


def test_token_request_mints_a_token_with_the_asked_expiry(
    api_client: client.ApiClient, namespace: str, kubectl: Kubectl
) -> None:
    core = client.CoreV1Api(api_client)
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=900)
    )
    minted = core.create_namespaced_service_account_token("default", namespace, request)
    expires = minted.status.expiration_timestamp
    left = (expires - dt.datetime.now(dt.UTC)).total_seconds()
    assert 850 < left <= 900 and minted.status.token.count(".") == 2
    too_short = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=60)
    )
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_service_account_token("default", namespace, too_short)
    assert refused.value.status == 422
    assert "may not specify a duration less than 10 minutes" in json.loads(refused.value.body)["message"]
    printed = kubectl.run("create", "token", "default", "-n", namespace, "--duration=15m").stdout.strip()
    assert printed.count(".") == 2
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_service_account_token("nobody", namespace, request)
    assert missing.value.status == 404


def test_service_account_token_gets_exactly_its_rbac_rights(
    api_client: client.ApiClient,
    devcluster: DevclusterProcess,
    namespace: str,
    other_namespace: str,
    robot: str,
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "visible"}})
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = core.create_namespaced_service_account_token(robot, namespace, request).status.token
    as_robot = _as(devcluster, token)
    try:
        robot_core = client.CoreV1Api(as_robot)
        listed = robot_core.list_namespaced_config_map(namespace).items
        assert [cm.metadata.name for cm in listed] == ["kube-root-ca.crt", "visible"]
        assert robot_core.read_namespaced_config_map("visible", namespace).metadata.name == "visible"
        with pytest.raises(ApiException) as create:
            robot_core.create_namespaced_config_map(namespace, {"metadata": {"name": "nope"}})
        assert create.value.status == 403
        assert json.loads(create.value.body)["message"] == (
            f'configmaps is forbidden: User "system:serviceaccount:{namespace}:robot" cannot create '
            f'resource "configmaps" in API group "" in the namespace "{namespace}"'
        )
        for forbidden in (
            lambda: robot_core.list_namespaced_config_map(other_namespace),
            lambda: robot_core.list_namespaced_secret(namespace),
            robot_core.list_namespace,
        ):
            with pytest.raises(ApiException) as denied:
                forbidden()
            assert denied.value.status == 403
        core.delete_namespaced_service_account(robot, namespace)
        with pytest.raises(ApiException) as gone:
            robot_core.list_namespaced_config_map(namespace)
        assert gone.value.status == 401
    finally:
        as_robot.close()


def test_groups_of_service_accounts_are_bound_too(
    api_client: client.ApiClient, devcluster: DevclusterProcess, namespace: str, robot: str
) -> None:
    rbac = client.RbacAuthorizationV1Api(api_client)
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "list-secrets"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "all-accounts-of-ns"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "list-secrets"},
            "subjects": [{"kind": "Group", "name": f"system:serviceaccounts:{namespace}"}],
        },
    )
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    core = client.CoreV1Api(api_client)
    token = core.create_namespaced_service_account_token(robot, namespace, request).status.token
    with _as(devcluster, token) as as_robot:
        assert client.CoreV1Api(as_robot).list_namespaced_secret(namespace).items is not None


def test_token_secret_is_filled_and_its_token_works_while_it_exists(
    api_client: client.ApiClient, devcluster: DevclusterProcess, namespace: str, robot: str
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_secret(
        namespace,
        {
            "metadata": {"name": "robot-token", "annotations": {"kubernetes.io/service-account.name": robot}},
            "type": "kubernetes.io/service-account-token",
        },
    )
    secret = wait_for(
        lambda: (s := core.read_namespaced_secret("robot-token", namespace)).data and s,
        what="the token controller",
    )
    account_uid = core.read_namespaced_service_account(robot, namespace).metadata.uid
    assert secret.metadata.annotations["kubernetes.io/service-account.uid"] == account_uid
    assert base64.b64decode(secret.data["namespace"]).decode() == namespace
    assert "ca.crt" in secret.data
    token = base64.b64decode(secret.data["token"]).decode()
    with _as(devcluster, token) as as_robot:
        robot_core = client.CoreV1Api(as_robot)
        listed = robot_core.list_namespaced_config_map(namespace).items
        assert [cm.metadata.name for cm in listed] == ["kube-root-ca.crt"]  # every namespace has it
        core.delete_namespaced_secret("robot-token", namespace)
        with pytest.raises(ApiException) as revoked:
            robot_core.list_namespaced_config_map(namespace)
        assert revoked.value.status == 401


def test_a_list_selecting_one_name_is_authorised_by_that_name(
    api_client: client.ApiClient, devcluster: DevclusterProcess, namespace: str
) -> None:
    core, rbac = client.CoreV1Api(api_client), client.RbacAuthorizationV1Api(api_client)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "one"}})
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "read-mine"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "verbs": ["get", "list", "watch"],
                    "resourceNames": ["mine"],
                }
            ],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "one-reads-mine"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "read-mine"},
            "subjects": [{"kind": "ServiceAccount", "name": "one", "namespace": namespace}],
        },
    )
    for name in ("mine", "theirs"):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name}})
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = core.create_namespaced_service_account_token("one", namespace, request).status.token
    with _as(devcluster, token) as as_one:
        one = client.CoreV1Api(as_one)
        listed = one.list_namespaced_config_map(namespace, field_selector="metadata.name=mine")
        assert [cm.metadata.name for cm in listed.items] == ["mine"]
        for selector in ("", "metadata.name=theirs", "metadata.name!=theirs"):
            with pytest.raises(ApiException) as denied:
                one.list_namespaced_config_map(namespace, field_selector=selector)
            assert denied.value.status == 403, selector
