"""The ``syncflow`` command line. Commands only parse their arguments and delegate."""

from __future__ import annotations

import click

from syncflow import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="syncflow")
def main() -> None:
    """Keep Kubernetes objects in sync between kcp workspaces and service clusters."""
