"""The clusters-mode environment of these tests (see ``tests.support.clusters_env``), one per module:
physical clusters east (Widgets with size and color) and west (size only), the agent's roles started."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.clusters_env import CRDS, ClustersEnv, clusters_environment, widget_crd


@pytest.fixture(scope="module")
def clusters_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClustersEnv]:
    with clusters_environment(tmp_path_factory.mktemp("clusters")) as env:
        for name, fields in (("east", ("size", "color")), ("west", ("size",))):
            env.add_physical(name).api.create(CRDS, widget_crd(*fields))
        env.start()
        yield env
