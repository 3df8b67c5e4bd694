"""``syncflow publish``: api-syncagent's job as one command (every role under one supervisor), as the
other modes' agents run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.publish_env import Published, PublishEnv, cluster_of, publish_environment

pytestmark = pytest.mark.integration  # every test here runs a devcluster or syncflow process


@pytest.fixture(scope="module")
def all_in_one(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PublishEnv]:
    with publish_environment(tmp_path_factory.mktemp("publish-all"), all_in_one=True) as env:
        yield env


def test_one_command_publishes_and_syncs(all_in_one: PublishEnv) -> None:
    env = all_in_one
    widgets = Published(env, "widgets", "all.example.com", "widgets", "Widget")
    widgets.create("team-1", "one", {"size": 1})
    copy = widgets.wait_copy(cluster_of(env, "team-1"), "one")
    assert copy["spec"] == {"size": 1}
    ready = env.condition("widgets")
    assert ready is not None and ready["status"] == "True", ready
