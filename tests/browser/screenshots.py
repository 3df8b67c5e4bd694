"""Screenshots of the sync console for the docs: ``python -m tests.browser.screenshots`` (``make
screenshots``) starts the browser tests' live stack (``tests.browser.stack``) with a few synced
ConfigMaps, one retrying and one parked, and writes ``console-overview.png`` and ``console-object.png``
(the parked object's page) into ``docs/images`` (``--out``)."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import Browser, expect, sync_playwright

from tests.browser.chromium import chromium_binary, missing_reason
from tests.support.processes import REPO
from tests.support.redis import provide_session_redis

if TYPE_CHECKING:  # imported once Redis is provided: the workload stack reads its URL at import
    from tests.browser.stack import ConsoleStack

SYNCED = [
    ("default", "app-config", {"LOG_LEVEL": "info", "REGION": "eu-west-1"}),
    ("default", "feature-flags", {"new-checkout": "true"}),
    ("shop", "storefront-settings", {"theme": "dark"}),
    ("payments", "currency-rates", {"EUR": "1.0", "USD": "1.08"}),
]
RETRYING = ("reports", "daily-summary", {"schedule": "0 6 * * *"})
"""Its namespace on the physical cluster is Terminating: every create is refused and retried."""
PARKED = ("shop", "checkout-settings", {"currency": "EUR"})
"""A hand-made ConfigMap sits where its copy must go: parked as ``conflict:foreign``."""
AGENT_SETTINGS = {"SYNCFLOW_BACKOFF_CAP": "60"}
"""A long backoff cap, so the retrying key is seen backing off rather than running."""
TIMEOUT = 30_000
"""Milliseconds any wait for the console may take."""


def stage(stack: ConsoleStack) -> None:
    """Create the objects and wait until each is in the state the pictures show."""
    for namespace, name, data in SYNCED:
        stack.create_source(namespace, name, data)
    for namespace, name, _ in SYNCED:
        stack.wait_copy(namespace, name)
    namespace, name, data = PARKED
    stack.plant_foreign(namespace, name)
    stack.create_source(namespace, name, data)
    stack.wait_parked(namespace, name)
    namespace, name, data = RETRYING
    stack.block_namespace(namespace)
    stack.create_source(namespace, name, data)


def shoot(stack: ConsoleStack, browser: Browser, out: Path) -> list[Path]:
    """Take the two screenshots once the console shows every state; their paths."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
    context.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    page = context.new_page()
    for namespace, name, _ in [*SYNCED, RETRYING, PARKED]:
        state = "retrying" if name == RETRYING[1] else "parked" if name == PARKED[1] else "synced"
        page.goto(f"{stack.url}/objects?namespace={namespace}&name={name}")
        expect(page.get_by_test_id("object-state")).to_have_text(re.compile(rf"\b{state}\b"))
    out.mkdir(parents=True, exist_ok=True)
    overview, detail = out / "console-overview.png", out / "console-object.png"
    page.goto(f"{stack.url}/")
    rule = page.get_by_test_id("rule-row").and_(page.locator(f'[data-rule="{stack.rule}"]'))
    for state in ("retrying", "parked"):  # the counts of the live update, every ~2 s
        expect(rule.locator(f'[data-state="{state}"]')).to_have_text("1")
    page.screenshot(path=str(overview), full_page=True)
    page.goto(f"{stack.url}/objects?namespace={PARKED[0]}&name={PARKED[1]}")
    page.get_by_test_id("object-link").click()
    expect(page.get_by_test_id("last-error")).to_contain_text("conflict:foreign")
    page.screenshot(path=str(detail), full_page=True)
    context.close()
    return [overview, detail]


def main(argv: list[str] | None = None) -> int:
    """Start the stack, stage the objects, write the screenshots."""
    parser = argparse.ArgumentParser(prog="python -m tests.browser.screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images", help="Where the PNGs go.")
    args = parser.parse_args(argv)
    binary = chromium_binary()
    if binary is None:
        print(f"error: {missing_reason()}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="syncflow-screenshots-"))
    (work / "redis").mkdir()
    (work / "stack").mkdir()
    redis = provide_session_redis(work / "redis")
    try:
        from tests.browser.stack import console_stack

        with console_stack(work / "stack", settings=AGENT_SETTINGS) as stack, sync_playwright() as playwright:
            stage(stack)
            browser = playwright.chromium.launch(executable_path=binary, headless=True)
            try:
                written = shoot(stack, browser, args.out)
            finally:
                browser.close()
    finally:
        if redis is not None:
            redis.stop()
        shutil.rmtree(work, ignore_errors=True)
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
