"""The browser tests' fixtures: the live stack with its console (``tests.browser.stack``), started once
for the module, and chromium driven by Playwright (headless, the system's binary). A failing test's
report carries the tail of the stack's logs."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.browser.chromium import chromium_binary, missing_reason
from tests.browser.stack import DEADLINE, ConsoleStack, console_stack

expect.set_options(timeout=DEADLINE * 1000)  # Playwright's assertions wait on their condition this long


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A headless chromium; the tests skip when none is installed."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip(missing_reason())
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=binary, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def console(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleStack]:
    """The live stack (started after the browser, so a machine without chromium starts nothing)."""
    with console_stack(tmp_path_factory.mktemp("console")) as stack:
        yield stack


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context's page; every wait of Playwright's fails after ``DEADLINE``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEADLINE * 1000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the stack's logs to a failing test's report."""
    report = yield
    stack = getattr(item, "funcargs", {}).get("console")
    if report.failed and isinstance(stack, ConsoleStack):
        report.sections.append(("syncflow logs", stack.logs()[-20000:]))
    return report
