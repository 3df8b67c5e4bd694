"""The conformance suite's fixtures: ``harness``, one live stack per mode for the whole session (pytest
groups the cases by mode, so each stack starts once and the previous one stops first), and ``mode``, the
harness with a case begun (ended, its config removed, after the test). A failing case's report carries
the tail of the stack's syncflow logs."""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.conformance.harness import ModeHarness
from tests.conformance.modes.clusters import clusters_harness
from tests.conformance.modes.edge import edge_harness
from tests.conformance.modes.publish import publish_harness
from tests.conformance.modes.workload import workload_harness

HARNESSES: dict[str, Callable[[Path], AbstractContextManager[ModeHarness]]] = {
    "publish": publish_harness,
    "workload": workload_harness,
    "clusters": clusters_harness,
    "edge": edge_harness,
}


@pytest.fixture(scope="session", params=list(HARNESSES))
def harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModeHarness]:
    """The live stack of one mode."""
    with HARNESSES[request.param](tmp_path_factory.mktemp(request.param)) as made:
        yield made


def case_name(test: str) -> str:
    """A DNS label for a test function: the first words of its name (without ``test_``), dashed, at most
    30 characters."""
    words: list[str] = re.findall(r"[a-z0-9]+", test.removeprefix("test_").lower())
    name = words[0][:30]
    for word in words[1:]:
        if len(name) + 1 + len(word) > 30:
            break
        name = f"{name}-{word}"
    return name


@pytest.fixture
def mode(harness: ModeHarness, request: pytest.FixtureRequest) -> Iterator[ModeHarness]:
    """The harness with a case of this test begun."""
    harness.begin(case_name(request.node.originalname))
    try:
        yield harness
    finally:
        harness.end()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the syncflow logs of the stack to a failing case's report."""
    report = yield
    harness = getattr(item, "funcargs", {}).get("harness")
    if report.failed and isinstance(harness, ModeHarness):
        report.sections.append((f"syncflow logs ({harness.mode})", harness.logs()[-20000:]))
    return report
