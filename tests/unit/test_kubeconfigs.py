"""Kubeconfigs held in API objects: inline data only, and no error ever quotes one."""

from __future__ import annotations

import os
import subprocess
import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml

from syncflow.devcluster.kubeconfig import write_kubeconfig
from syncflow.kube import kubeconfigs
from syncflow.kube.clients import KubeconfigError
from syncflow.kube.kubeconfigs import fingerprint, inline_client
from tests.support.devcluster import kubectl_binary

SECRET = "s3cret-token-value"


def kubeconfig(user: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "c",
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "clusters": [{"name": "k", "cluster": cluster or {"server": "https://127.0.0.1:6443"}}],
            "users": [{"name": "u", "user": user if user is not None else {"token": SECRET}}],
        }
    )


def test_an_inline_kubeconfig_becomes_a_client() -> None:
    api = inline_client(kubeconfig())
    assert api.configuration.host == "https://127.0.0.1:6443"
    assert api.configuration.api_key == {"BearerToken": f"Bearer {SECRET}"}
    assert fingerprint(kubeconfig()) != fingerprint(kubeconfig(user={"token": "other"}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"users: [{{token: {SECRET}", "not valid YAML (line "),
        (SECRET, "not a kubeconfig"),
        (kubeconfig().replace("current-context: c", "current-context: zz"), "names a context"),
        (kubeconfig(user={"tokenFile": f"/var/run/{SECRET}"}), "the user uses tokenFile"),
        (kubeconfig(user={"exec": {"command": SECRET}}), "the user uses exec"),
        (kubeconfig(user={SECRET: "x"}), "the user uses 1 unknown field(s)"),
        (
            kubeconfig(cluster={"server": "https://x", "certificate-authority": SECRET}),
            "certificate-authority",
        ),
        (
            kubeconfig(cluster={"server": f"file:///{SECRET}"}),
            "the cluster's server is not a URL (http, https)",
        ),
        (kubeconfig(cluster={"server": "https://[::1"}), "the cluster's server is not a URL (http, https)"),
        (
            kubeconfig(cluster={"server": "https://x", "proxy-url": f"ftp://{SECRET}"}),
            "the cluster's proxy-url is not a URL (http, https, socks4, socks4a, socks5, socks5h)",
        ),
    ],
)
def test_errors_name_the_problem_and_never_a_value(text: str, expected: str) -> None:
    with pytest.raises(KubeconfigError) as raised:
        inline_client(text)
    assert expected in str(raised.value)
    assert SECRET not in str(raised.value)
    # the whole traceback, as a parked key keeps it, holds no part of the kubeconfig either
    assert SECRET not in "".join(traceback.format_exception(raised.value))


def with_sections(**sections: Any) -> str:
    """A kubeconfig whose top-level fields ``sections`` replace the valid ones (``_`` for ``-``)."""
    valid = yaml.safe_load(kubeconfig())
    return yaml.safe_dump({**valid, **{k.replace("_", "-"): v for k, v in sections.items()}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 120_000, "longer than 65536 bytes"),
        ("[" * 25 + "]" * 25, "nested deeper than 20 levels (line 1, column 21)"),
        ("[" * 60_000, "(line 1, column"),  # libyaml stops at 1000 open brackets, the depth limit at 21
        ("- " * 30_000, "nested deeper than 20 levels"),
        ("".join(" " * i + "a:\n" for i in range(30)), "nested deeper than 20 levels (line 21"),
        (f"a: &x [{SECRET}]\nb: *x\n", "uses YAML aliases"),
        (f"current-context: {'9' * 5000}\n", "not valid YAML"),  # an integer past Python's digit limit
        (f"current-context: !!timestamp 2026-13-45 # {SECRET}\n", "not valid YAML"),
        ("a: 1\n---\nb: 2\n", "not valid YAML"),
    ],
)
def test_hostile_yaml_is_refused_before_it_costs_a_worker(text: str, expected: str) -> None:
    with pytest.raises(KubeconfigError) as raised:
        inline_client(text)
    assert expected in str(raised.value)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (with_sections(contexts=5), "contexts: want a list of {name, context}"),
        (with_sections(clusters={"name": "k"}), "clusters: want a list of {name, cluster}"),
        (with_sections(users=SECRET), "users: want a list of {name, user}"),
        (with_sections(contexts=[SECRET]), "contexts[0]: want {name: <string>, context: <mapping>}"),
        (
            with_sections(clusters=[{"name": "k", "cluster": [SECRET]}]),
            "clusters[0]: want {name: <string>, cluster: <mapping>}",
        ),
        (
            with_sections(users=[{"name": "u", "user": {"token": "t"}}, {"name": ["u"], "user": {}}]),
            "users[1]: want {name: <string>, user: <mapping>}",
        ),
        (with_sections(current_context=["c"]), "current-context: want the name of a context"),
        (
            with_sections(contexts=[{"name": "c", "context": {"cluster": {"k": SECRET}}}]),
            "the current context's cluster: want a string",
        ),
        (
            with_sections(contexts=[{"name": "c", "context": {"cluster": "k", "user": 5}}]),
            "the current context's user: want a string",
        ),
        (kubeconfig(cluster={"server": ["https://x"]}), "the cluster's server: want a string"),
        (
            kubeconfig(cluster={"server": "https://x", "insecure-skip-tls-verify": SECRET}),
            "the cluster's insecure-skip-tls-verify: want true or false",
        ),
        (kubeconfig(user={"token": {"v": SECRET}}), "the user's token: want a string"),
        (yaml.safe_dump([SECRET]), "not a kubeconfig"),
    ],
)
def test_every_wrong_type_is_named_and_never_escapes_as_another_error(text: str, expected: str) -> None:
    with pytest.raises(KubeconfigError) as raised:
        inline_client(text)
    assert expected in str(raised.value)
    assert SECRET not in "".join(traceback.format_exception(raised.value))


def test_a_kubeconfig_with_null_sections_and_extensions_is_accepted() -> None:
    text = with_sections(
        users=None,
        contexts=[{"name": "c", "context": {"cluster": "k", "namespace": "n", "extensions": []}}],
        clusters=[{"name": "k", "cluster": {"server": "https://x:6443", "extensions": [{"name": "e"}]}}],
    )
    assert inline_client(text).configuration.host == "https://x:6443"


def test_without_libyaml_the_depth_limit_still_stops_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubeconfigs, "_LOADER", yaml.SafeLoader)
    with pytest.raises(KubeconfigError, match=r"nested deeper than 20 levels \(line 1, column 21\)"):
        inline_client("[" * 60_000)


LINK_LOCAL = [
    "https://169.254.169.254",
    "http://169.254.1.1:80/path",
    "https://[fe80::1]:6443",
    "https://[fe80::1%25eth0]:6443",
    "https://[fd00:ec2::254]",
    "https://[::ffff:169.254.169.254]",
    "https://[64:ff9b::a9fe:a9fe]",
    "http://2852039166",  # 169.254.169.254 as one number, as resolvers read it
    "http://0xa9fea9fe",
    "http://169.254.43518",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.google.internal.",
]


@pytest.mark.parametrize("url", LINK_LOCAL)
def test_link_local_and_metadata_servers_are_refused_unless_allowed(url: str) -> None:
    for text, field in (
        (kubeconfig(cluster={"server": url}), "server"),
        (kubeconfig(cluster={"server": "https://x", "proxy-url": url}), "proxy-url"),
    ):
        with pytest.raises(KubeconfigError) as raised:
            inline_client(text)
        assert str(raised.value) == (
            f"the cluster's {field} is a link-local or cloud metadata address: "
            "refused (an operator may allow it with --allow-link-local-servers)"
        )
        assert inline_client(text, allow_link_local=True).configuration.host in (url.rstrip("/"), "https://x")


@pytest.mark.parametrize(
    "url", ["https://10.0.0.1", "https://169.255.0.1", "https://[fe00::1]", "https://metadata.example.com"]
)
def test_other_servers_are_accepted(url: str) -> None:
    assert inline_client(kubeconfig(cluster={"server": url})).configuration.host == url


@pytest.mark.parametrize("token", ["12e45678", "1234567890123456", "true", "0x1f"])
@pytest.mark.integration
def test_kubectl_reads_a_written_kubeconfig_whatever_its_token_looks_like(token: str, tmp_path: Path) -> None:
    """kubectl reads YAML 1.2 (an unquoted 12e45678 is a number): every string is written quoted."""
    path = tmp_path / "kubeconfig"
    write_kubeconfig(
        path,
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}
            ],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        },
    )
    shown = subprocess.run(
        [kubectl_binary(), "config", "view", "--raw", "-o", "jsonpath={.users[0].user.token}"],
        env={**os.environ, "KUBECONFIG": str(path)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (shown.returncode, shown.stdout) == (0, token), shown.stderr
