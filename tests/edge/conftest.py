"""The edge-mode environment of these tests (see ``tests.support.edge_env``), one per module, started."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.edge_env import EdgeEnv, edge_environment


@pytest.fixture(scope="module")
def edge_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EdgeEnv]:
    with edge_environment(tmp_path_factory.mktemp("edge")) as env:
        env.start()
        env.wait_listening()
        yield env
