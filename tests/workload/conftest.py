"""The workload-mode environment of these tests (see ``tests.support.workload_env``), one per module:
SyncTarget east, its agent started and Ready."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.workload_env import WorkloadEnv, workload_environment


@pytest.fixture(scope="module")
def workload_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkloadEnv]:
    with workload_environment(tmp_path_factory.mktemp("workload")) as env:
        env.start()
        env.wait_ready()
        yield env
