"""``syncflow publish``: api-syncagent as one command, like the other modes' agents — every role (and a
private Redis unless ``--redis-url``) under one supervisor, or one role with ``--role`` (imports stay
lazy for a fast --help)."""

from __future__ import annotations

from typing import Any

import click

from syncflow.runtime import agentcli, cliopts


@click.command("publish")
@cliopts.flags(
    cliopts.CONNECT[2:6], cliopts.PUBLISH, cliopts.LEASE[:1], (cliopts.SYNC[0], cliopts.SYNC[2]), config=False
)
@agentcli.agent_options
def publish(
    config_file: str | None, workers: int, verbosity: int, role: str, data_dir: str | None, **flags: Any
) -> None:
    """Run api-syncagent's job for one APIExport: publish the service cluster's PublishedResources into
    kcp and sync their objects from every workspace that binds the export.

    The same flags as 'syncflow watch' and 'syncflow worker' (api-syncagent's), plus the agent flags."""
    settings = agentcli.load("publish", config_file, verbosity, {}, **flags)

    def check() -> None:
        from syncflow.config import ConfigError
        from syncflow.modes.publish.endpoint import check_endpoint_slice

        if not settings.apiexportendpointslice_ref:
            raise ConfigError("--apiexportendpointslice-ref is required in publish mode")
        check_endpoint_slice(settings)

    agentcli.run(settings, role, workers, data_dir, check)
