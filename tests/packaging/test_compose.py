"""docker-compose.yml follows the Compose Specification and runs every process from the one image.

The schema is the Compose Specification's own (compose-spec/compose-spec, schema/compose-spec.json),
as the check-jsonschema package ships it (``--builtin-schema vendor.compose-spec``).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from syncflow.cli import main
from syncflow.config import load_settings
from tests.support.processes import REPO

COMPOSE = REPO / "docker-compose.yml"
ENV_EXAMPLE = REPO / "syncflow.env.example"


def compose_schema() -> dict[str, Any]:
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads(vendor.joinpath("compose-spec.json").read_text())
    return schema


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def env_file(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_compose_file_is_valid_against_the_compose_spec(compose: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(compose_schema())
    assert [f"{e.json_path}: {e.message}" for e in validator.iter_errors(compose)] == []


def test_the_schema_catches_mistakes(compose: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(compose_schema())
    broken = json.loads(json.dumps(compose))
    broken["services"]["worker"]["replica"] = 3
    broken["services"]["beat"]["restart"] = ["always"]
    errors = sorted(e.json_path for e in validator.iter_errors(broken))
    assert errors == ["$.services.beat.restart", "$.services.worker"]


def test_every_process_runs_from_the_one_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"redis", "watch", "worker", "beat", "flower", "console", "demo"}
    ours = {name: s for name, s in services.items() if name != "redis"}
    assert {s["image"] for s in ours.values()} == {"${SYNCFLOW_IMAGE:-syncflow:local}"}
    assert {s["build"]["context"] for s in ours.values()} == {"."}
    assert services["watch"]["command"] == ["watch"]
    assert services["worker"]["command"][0] == "worker"
    assert services["beat"]["command"] == ["beat"]
    assert services["flower"]["entrypoint"] == ["celery", "-A", "syncflow.tasks", "flower"]
    for name, service in ours.items():
        assert service["depends_on"]["redis"]["condition"] == "service_healthy", name
        assert service["env_file"] == [{"path": "syncflow.env", "required": False}], name
        assert service["environment"]["SYNCFLOW_REDIS_URL"] == "redis://redis:6379/0", name


def test_workers_scale_and_kubeconfigs_are_read_only(compose: dict[str, Any]) -> None:
    services = compose["services"]
    worker = services["worker"]
    assert "container_name" not in worker and "ports" not in worker  # --scale worker=N needs both absent
    mount = "${SYNCFLOW_KUBECONFIGS:-./kubeconfigs}:/etc/syncflow/kubeconfigs:ro"
    for name in ("watch", "worker"):
        assert mount in services[name]["volumes"]
    assert services["beat"]["volumes"] == ["beat-state:/var/lib/syncflow"]
    for name in ("watch", "worker"):  # the image's HEALTHCHECK asks there
        assert services[name]["environment"]["SYNCFLOW_HEALTH_ADDRESS"] == "0.0.0.0:8080"


def test_demo_is_a_profile_on_the_stacks_redis(compose: dict[str, Any]) -> None:
    demo = compose["services"]["demo"]
    assert demo["profiles"] == ["demo"]
    assert demo["command"][:3] == ["demo", "--redis-url", "redis://redis:6379/1"]
    assert "demo" in demo["build"]["args"]["EXTRAS"].split(",")
    assert all("profiles" not in s for n, s in compose["services"].items() if n != "demo")


def test_env_example_holds_valid_settings() -> None:
    values = env_file(ENV_EXAMPLE)
    assert values["SYNCFLOW_KUBECONFIG"].startswith("/etc/syncflow/kubeconfigs/")
    assert values["SYNCFLOW_KCP_KUBECONFIG"].startswith("/etc/syncflow/kubeconfigs/")
    settings = {
        name.removeprefix("SYNCFLOW_").lower(): value
        for name, value in values.items()
        if name.startswith("SYNCFLOW_") and not name.startswith("SYNCFLOW_CONSOLE_")
    }
    loaded = load_settings(**settings)
    assert loaded.agent_name == values["SYNCFLOW_AGENT_NAME"]
    assert loaded.apiexportendpointslice_ref == values["SYNCFLOW_APIEXPORTENDPOINTSLICE_REF"]
    assert values["FLOWER_BASIC_AUTH"].count(":") == 1
    assert values["SYNCFLOW_CONSOLE_BASIC_AUTH"].count(":") == 1


def test_flower_lists_each_tasks_keys_and_exception(compose: dict[str, Any]) -> None:
    from flower.views.tasks import TASK_COLUMNS

    [columns] = [f for f in compose["services"]["flower"]["command"] if f.startswith("--tasks_columns=")]
    shown = columns.partition("=")[2].split(",")
    assert {"args", "exception"} <= set(shown) and set(shown) <= set(TASK_COLUMNS), shown
    documented = (REPO / "README.md").read_text() + (REPO / "docs" / "operations.md").read_text()
    assert documented.count(columns) >= 3, "README.md and docs/operations.md show the same columns"


def test_the_console_serves_on_its_port_with_a_login(compose: dict[str, Any]) -> None:
    console = compose["services"]["console"]
    assert console["command"][:3] == ["console", "--host", "0.0.0.0"]
    assert console["ports"] == ["${CONSOLE_PORT:-127.0.0.1:8080}:8080"]
    assert console["environment"]["SYNCFLOW_HEALTH_ADDRESS"] == "127.0.0.1:8080"
    assert "console" in console["build"]["args"]["EXTRAS"].split(",")
    result = CliRunner().invoke(main, [*console["command"], "--help"])
    assert result.exit_code == 0, result.output
