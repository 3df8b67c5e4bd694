"""Who may use the console: credentials (bearer or basic) beyond loopback, CSRF tokens and the same
origin on every POST, and the refusal to serve other hosts without credentials."""

from __future__ import annotations

import base64

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from syncflow.cli import main
from syncflow.console.reader import Reader
from syncflow.console.security import Auth, InsecureBindError
from syncflow.queue.service import QueueService
from tests.console.conftest import client_for, put

PARKED = "sync/dbs/root:team-a/default/parked-db"


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def csrf_of(client: TestClient, headers: dict[str, str]) -> str:
    page = client.get("/", headers=headers).text
    return page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


@pytest.fixture
def parked(service: QueueService) -> str:
    put(service, PARKED, "parked")
    return PARKED


@pytest.mark.parametrize("path", ["/", "/objects", f"/objects/{PARKED}", "/api/overview", "/api/objects"])
def test_a_bearer_token_is_required_everywhere(reader: Reader, parked: str, path: str) -> None:
    client = client_for(reader, Auth(token="s3cret"))
    missing = client.get(path)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_basic_auth(reader: Reader, parked: str) -> None:
    client = client_for(reader, Auth(basic="admin:pw"))
    missing = client.get("/api/overview")
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Basic")
    assert client.get("/api/overview", headers=basic("admin", "nope")).status_code == 401
    assert client.get("/api/overview", headers=basic("other", "pw")).status_code == 401
    assert client.get("/api/overview", headers={"Authorization": "Basic !!!"}).status_code == 401
    assert client.get("/api/overview", headers=basic("admin", "pw")).status_code == 200


def test_health_and_static_files_need_no_credentials(reader: Reader) -> None:
    client = client_for(reader, Auth(token="s3cret"))
    assert client.get("/healthz").status_code == 200
    assert client.get("/static/console.js").status_code == 200


def test_a_post_needs_credentials_before_anything(reader: Reader, parked: str) -> None:
    client = client_for(reader, Auth(token="s3cret"))
    assert client.post(f"/api/objects/{parked}/replay").status_code == 401


def test_a_post_without_or_with_a_bad_csrf_token_is_refused(reader: Reader, parked: str) -> None:
    auth = {"Authorization": "Bearer s3cret"}
    client = client_for(reader, Auth(token="s3cret"))
    url = f"/api/objects/{parked}/replay"
    assert client.post(url, headers=auth).status_code == 403
    assert client.post(url, headers={**auth, "X-CSRF-Token": "0" * 64}).status_code == 403
    assert (
        client.post("/api/replay", headers=auth, data={"rule": "dbs", "csrf_token": "bad"}).status_code == 403
    )
    token = csrf_of(client, auth)
    assert client.get(f"/api/objects/{parked}", headers=auth).json()["row"]["state"] == "parked", (
        "nothing replayed"
    )
    good = client.post(url, headers={**auth, "X-CSRF-Token": token})
    assert good.status_code == 200 and good.json()["replayed"] == 1


def test_a_csrf_token_is_one_process_s_and_one_identity_s(reader: Reader) -> None:
    first, second = Auth(token="t"), Auth(token="t")
    assert first.csrf_token("bearer") != second.csrf_token("bearer"), "a restarted console issues new tokens"
    assert first.csrf_token("bearer") != first.csrf_token("basic:admin")


def test_a_post_from_another_origin_is_refused(reader: Reader, parked: str) -> None:
    client = client_for(reader)
    token = csrf_of(client, {})
    url = f"/api/objects/{parked}/replay"
    evil = client.post(url, headers={"X-CSRF-Token": token, "Origin": "http://evil.example"})
    assert evil.status_code == 403
    own = client.post(url, headers={"X-CSRF-Token": token, "Origin": "http://testserver"})
    assert own.status_code == 200


def test_no_credentials_only_on_loopback() -> None:
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        Auth().check_bind(host)
    for host in ("0.0.0.0", "10.0.0.5", "::", "console.example"):
        with pytest.raises(InsecureBindError, match="without authentication"):
            Auth().check_bind(host)
    Auth(token="t").check_bind("0.0.0.0")
    Auth(basic="a:b").check_bind("0.0.0.0")
    with pytest.raises(ValueError, match="user:password"):
        Auth(basic="nocolon")


def test_the_console_refuses_to_start_on_all_interfaces_without_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNCFLOW_CONSOLE_TOKEN", raising=False)
    monkeypatch.delenv("SYNCFLOW_CONSOLE_BASIC_AUTH", raising=False)
    result = CliRunner().invoke(main, ["console", "--host", "0.0.0.0", "--agent-name", "refuses"])
    assert result.exit_code != 0
    assert "refusing to serve on 0.0.0.0 without authentication" in result.output
