"""The desk's check-in list (24.1.1) in a real browser: Debian's Chromium, driven by Playwright, against the real app
with the example event (four sections, round 1 paired, nobody checked in yet).

Li (chief) logs in: above the cases, the players of each section's round 1 who have not checked in, with their board
and what the camera setup lacks, in Chinese; one is checked in by hand with a reason and leaves the list; in English
the same list has no Chinese left. At 1366x768 the list stays compact: the case queue below it is still in view.
Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from tests.browser.chromium import launch
from tests.browser.screenshots import views
from tests.browser.test_dashboard import LI_TOKEN, Served, log_in, serve_example_event
from tests.browser.test_desk_languages import CJK, leftovers

pytestmark = pytest.mark.asyncio

ROWS = "#check-in-lists li.checkin-player"
FIRST = f"{ROWS}[data-section='national-youth-2021/youth-m'][data-start-no='1']"
BEARER = {"Authorization": f"Bearer {LI_TOKEN}"}


async def youth_m(served: Served) -> dict[str, Any]:
    answer = await served.http.get(served.base + "/api/v1/events/national-youth-2021/sections/youth-m/check-in",
                                   headers=BEARER)  # fmt: skip
    assert answer.status == 200
    body: dict[str, Any] = await answer.json()
    return body


async def not_checked_in(served: Served) -> int:
    """How many players of the example event's sections have not checked in for their current round, by the API."""
    events = await (await served.http.get(served.base + "/api/v1/events")).json()
    total = 0
    for event in events:
        for section in event["sections"]:
            path = f"/api/v1/events/{event['slug']}/sections/{section['slug']}/check-in"
            answer = await served.http.get(served.base + path, headers=BEARER)
            if answer.status == 200:
                total += (await answer.json())["counts"]["not_checked_in"]
    assert total >= 4
    return total


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    async with serve_example_event(tmp_path, deadline_grace_ms=600_000) as served:
        yield served


async def test_24_1_1_the_desk_lists_who_has_not_checked_in_in_both_languages(served: Served) -> None:
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            waiting = await not_checked_in(served)
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await page.wait_for_function(f"() => document.querySelectorAll('{ROWS}').length === {waiting}",
                                         timeout=10_000)  # fmt: skip
            assert await page.get_attribute("#check-in-count", "data-count") == str(waiting)
            assert await page.text_content("#check-in-article") == "第 24.1.1 条"
            first = await page.text_content(FIRST) or ""
            assert "Male Youth Player 1" in first and "1台" in first
            assert "摄像头未连接、未做环境扫描、未做耳部检查、环境未批准" in first
            head = await page.text_content("#check-in-lists li.checkin-section") or ""
            assert "Male Youth" in head and "第1轮" in head and "4 人未报到" in head
            await views(page, "arbiter-check-in-zh")

            await page.click(f"{FIRST} button.checkin-button")
            await page.wait_for_selector("#check-in-dlg[open]")
            assert "尚缺：摄像头未连接" in (await page.text_content("#check-in-dlg-missing") or "")
            await page.click("#check-in-submit")  # no reason yet: refused on the page
            assert await page.text_content("#check-in-answer") == "请写明理由"
            await page.fill("#check-in-reason", "checked in on the platform at 08:40")
            await page.click("#check-in-submit")
            await page.wait_for_selector(FIRST, state="detached", timeout=5_000)
            assert await page.get_attribute("#check-in-count", "data-count") == str(waiting - 1)
            assert "Male Youth Player 1 已手动报到（第1轮）" in (await page.text_content("#check-in-said") or "")
            checked = [p for p in (await youth_m(served))["players"] if p["checked_in"]]
            assert [(p["start_no"], p["check_in"]["how"], p["check_in"]["by"]) for p in checked] == [
                (1, "manual", "Li")]  # fmt: skip

            await page.click("#lang")
            await page.wait_for_function("() => document.getElementById('check-in-title').textContent === "
                                         "'Not checked in'")  # fmt: skip
            second = f"{ROWS}[data-section='national-youth-2021/youth-m'][data-start-no='3']"
            text = await page.text_content(second) or ""
            assert "B1" in text and "camera not connected, no room scan, no ear check, setup not approved" in text
            chinese = await leftovers(page, CJK)
            assert not chinese, chinese
            # Compact at 1366x768: the list keeps to its share of the column, the cases' title below it in view.
            box = await page.locator("#check-in").bounding_box()
            cases = await page.locator("#cases-title").bounding_box()
            assert box is not None and cases is not None
            assert box["height"] <= 0.4 * 768 and cases["y"] + cases["height"] <= 768, (box, cases)
            await views(page, "arbiter-check-in-en")
            assert not errors, errors
        finally:
            await browser.close()
