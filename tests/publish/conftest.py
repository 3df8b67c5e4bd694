"""The publish-mode environment of these tests (see ``tests.support.publish_env``).

A module gets one of its own, unless it says ``SHARES_PUBLISH_ENV = True``: those modules share one
for the whole package. A module shares only when its tests make their own PublishedResources under
names no other sharing module uses and leave the agent's processes, the workspaces' bindings and the
APIExport as a fresh environment has them (so no module that kills a role, refuses a claim or
creates a binding shares). Each environment is two devclusters and an agent's watch, worker and beat:
sharing one saves their start and stop per module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.publish_env import PublishEnv, publish_environment


@pytest.fixture(scope="package")
def shared_publish_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublishEnv]:
    with publish_environment(tmp_path_factory.mktemp("publish-shared")) as env:
        yield env


@pytest.fixture(scope="module")
def publish_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PublishEnv]:
    if getattr(request.module, "SHARES_PUBLISH_ENV", False):
        yield request.getfixturevalue("shared_publish_env")
        return
    with publish_environment(tmp_path_factory.mktemp("publish")) as env:
        yield env
