"""The flags of settings: every one is a real setting, shows that setting's default and its variable,
and the processes that talk to clusters take the api-syncagent flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from syncflow.cli import main
from syncflow.config import Settings
from syncflow.runtime import cliopts

SPECIAL = {
    "kubeconfig": "in-cluster",
    "published_resource_selector": "all",
    "broker_url": "--redis-url",
    "namespace": "the pod's own, else default",
}


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


def test_api_syncagents_flag_forms_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """As its Helm chart passes them: booleans with =true|false, comma lists, its log format names."""
    from syncflow.cli import commands as cli

    seen: list[Settings] = []
    settings_of = cli._settings

    def capture(config_file: str | None, log_debug: bool = False, **flags: object) -> Settings:
        seen.append(settings_of(config_file, log_debug, **flags))
        raise SystemExit(0)

    monkeypatch.setattr(cli, "_settings", capture)
    runner = CliRunner()
    for args in (
        ["watch", "--enable-leader-election=false"],
        ["watch", "--enable-leader-election=true", "--log-format=console"],
        ["worker", "--disabled-controllers=apiexport,sync", "--log-format=JSON"],
        ["worker", "--disabled-controllers", "sync", "--disabled-controllers", "apiresourceschema"],
    ):
        assert runner.invoke(main, args).exit_code == 0, args
    assert [(s.enable_leader_election, s.log_format, s.disabled_controllers) for s in seen] == [
        (False, "text", []),
        (True, "text", []),
        (True, "json", ["apiexport", "sync"]),
        (True, "text", ["sync", "apiresourceschema"]),
    ]
    refused = runner.invoke(main, ["worker", "--disabled-controllers=apiexport,bogus"])
    assert refused.exit_code == 2 and "bogus: want apiexport, apiresourceschema, sync" in refused.output


def test_the_namespace_defaults_to_the_pods_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """api-syncagent requires --namespace; syncflow takes its pod's own, or default outside a cluster."""
    from syncflow import config

    monkeypatch.delenv("SYNCFLOW_NAMESPACE", raising=False)
    own = tmp_path / "namespace"
    monkeypatch.setattr(config, "SERVICE_ACCOUNT_NAMESPACE", own)
    assert config.load_settings().namespace == "default"
    own.write_text("syncflow-system\n")
    assert config.load_settings().namespace == "syncflow-system"
    assert config.load_settings(namespace="elsewhere").namespace == "elsewhere"
