"""The flags of settings: every one is a real setting, shows that setting's default and its variable,
and the processes that talk to clusters take the api-syncagent flags."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from syncflow import cliopts
from syncflow.cli import main
from syncflow.config import Settings

SPECIAL = {"kubeconfig": "in-cluster", "published_resource_selector": "all", "broker_url": "--redis-url"}


def shown(default: object) -> str:
    """How a flag's help names a settings default."""
    if default is None or default == []:
        return "none"
    if default == "":
        return "off"
    if default is True:
        return "enabled"
    return f"{default:g}" if isinstance(default, float) else str(default)


@pytest.mark.parametrize("flag", cliopts.ALL, ids=lambda f: f.setting)
def test_each_flag_shows_its_settings_default(flag: cliopts.Flag) -> None:
    field = Settings.model_fields[flag.setting]
    default = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    assert flag.default == SPECIAL.get(flag.setting, shown(default))


@pytest.mark.parametrize("command", ["watch", "worker"])
def test_processes_that_talk_to_clusters_take_api_syncagents_flags(command: str) -> None:
    output = CliRunner().invoke(main, [command, "--help"]).output
    for option in (
        "--kubeconfig",
        "--kcp-kubeconfig",
        "--kubeconfig-host-override",
        "--kubeconfig-ca-file-override",
        "--kcp-host-override",
        "--kcp-ca-file-override",
        "--namespace",
        "--agent-name",
        "--apiexportendpointslice-ref",
        "--published-resource-selector",
        "--disabled-controllers",
        "--metrics-address",
        "--health-address",
        "--log-format",
        "--log-debug",
    ):
        assert option in output, f"{command} lacks {option}"
    assert (
        "env: SYNCFLOW_KCP_KUBECONFIG" in output.replace("\n", " ").replace("  ", " ")
        or "SYNCFLOW_KCP_KUBECONFIG" in output
    )
