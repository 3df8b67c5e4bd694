"""The publish-mode environment of these tests (see ``tests.support.publish_env``), one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.publish_env import PublishEnv, publish_environment


@pytest.fixture(scope="module")
def publish_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublishEnv]:
    with publish_environment(tmp_path_factory.mktemp("publish")) as env:
        yield env
