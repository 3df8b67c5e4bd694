"""The sync console in a real browser, on a live stack: an operator finds a parked object by name, reads
why it is parked, fixes the cause, replays it and watches it become synced; and a console with auth asks
for credentials."""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import Error as PlaywrightError

from tests.browser.stack import ConsoleStack

pytestmark = [pytest.mark.integration, pytest.mark.browser]

NAMESPACE = "shop"
PARKED = "checkout-settings"
SYNCED = "storefront-settings"


def test_parked_object_found_fixed_and_replayed(console: ConsoleStack, page: Page) -> None:
    s = console
    s.create_source(NAMESPACE, SYNCED, {"theme": "dark"})
    s.wait_copy(NAMESPACE, SYNCED)
    s.plant_foreign(NAMESPACE, PARKED)
    s.create_source(NAMESPACE, PARKED, {"currency": "EUR"})
    failure = s.wait_parked(NAMESPACE, PARKED)
    assert failure.cause == "conflict:foreign", failure

    page.goto(f"{s.url}/")
    rule = page.get_by_test_id("rule-row").and_(page.locator(f'[data-rule="{s.rule}"]'))
    expect(rule.locator('[data-state="parked"]')).to_have_text("1")
    # the synced copy's latency, under the rule the console counts it by
    expect(rule.get_by_test_id("rule-p50")).to_have_text(re.compile(r"^\d+\.\d{3} s$"))

    page.goto(f"{s.url}/objects")
    rows = page.get_by_test_id("object-row")
    expect(rows.filter(has_text=SYNCED)).not_to_have_count(0)
    page.locator('input[name="name"]').fill(PARKED)
    page.get_by_test_id("filter").click()
    expect(page).to_have_url(re.compile(rf"[?&]name={PARKED}(&|$)"))
    expect(rows.filter(has_text=SYNCED)).to_have_count(0)
    row = rows.and_(page.locator(f'[data-key="{s.key(NAMESPACE, PARKED)}"]'))
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("object-state")).to_have_text(re.compile(r"\bparked\b"))
    row.get_by_test_id("object-link").click()

    expect(page).to_have_url(re.compile(r"/objects/"))
    state = page.get_by_test_id("object-state")
    expect(state).to_have_text(re.compile(r"\bparked\b"))
    error = page.get_by_test_id("last-error")
    expect(error).to_contain_text("conflict:foreign")
    expect(error).to_contain_text("not created by syncflow")
    page.evaluate("window.__notReloaded = true")

    s.remove_foreign(NAMESPACE, PARKED)
    assert s.parked(NAMESPACE, PARKED) is not None, "removing the cause replayed the key by itself"

    page.get_by_test_id("replay").click()
    page.get_by_test_id("confirm-replay").click()
    key = re.escape(s.key(NAMESPACE, PARKED))
    expect(page.get_by_test_id("replay-result")).to_have_text(re.compile(rf"\breplayed\b.*{key}"))
    expect(state).to_have_text(re.compile(r"\bsynced\b"))
    assert page.evaluate("window.__notReloaded === true"), "the page reloaded to show the new state"
    assert s.wait_copy(NAMESPACE, PARKED)["data"] == {"currency": "EUR"}
    assert s.parked(NAMESPACE, PARKED) is None


def test_console_with_basic_auth_asks_for_it(console: ConsoleStack, browser: Browser) -> None:
    url = console.start_console("console-auth", env={"SYNCFLOW_CONSOLE_BASIC_AUTH": "operator:s3cret-pw"})
    anonymous = browser.new_context()
    try:
        page = anonymous.new_page()
        # chromium finds no credentials to answer the challenge with and gives up the navigation
        with page.expect_response(f"{url}/") as answer, contextlib.suppress(PlaywrightError):
            page.goto(f"{url}/")
        refused = answer.value
        assert refused.status == 401, refused.status
        assert refused.headers.get("www-authenticate", "").lower().startswith("basic"), refused.headers
    finally:
        anonymous.close()
    signed_in = browser.new_context(http_credentials={"username": "operator", "password": "s3cret-pw"})
    try:
        page = signed_in.new_page()
        response = page.goto(f"{url}/")
        assert response is not None and response.status == 200, response and response.status
        expect(page.get_by_test_id("rule-row").filter(has_text=console.rule)).not_to_have_count(0)
    finally:
        signed_in.close()
