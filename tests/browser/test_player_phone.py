"""The player's page on a phone (issue 13): Debian's Chromium, driven by Playwright, 390 px wide, against the real app.

A player of the example event (Asia/Shanghai) opens their link: the page is in Chinese, names them, their event,
section, round, board, colour and opponent (from the event's pairing), shows no empty pill and no horizontal scroll.
They ask to leave with a reason: the request waits, the arbiter dismisses it (refused, with the arbiter's reason, on
the page), they ask again and the arbiter grants 5 minutes (the page says until when, 24-hour, in the event's zone).
In English the same, and no Chinese is left but the language switch and user data. Screenshots go to
tests/browser/artifacts/.

The camera is not started (the WebRTC path has its own tests, tests/browser/test_player_page.py): the requests do not
need it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Page, ViewportSize, async_playwright

from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS
from tests.browser.test_dashboard import LI_TOKEN, Served, load_example_event, served
from tests.browser.test_desk_languages import CJK, leftovers

__all__ = ["served"]  # the fixture, imported from the arbiters' dashboard test

pytestmark = pytest.mark.asyncio

PHONE: ViewportSize = {"width": 390, "height": 844}
LAYOUT = """() => ({
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    emptyPills: [...document.querySelectorAll('.state, #status, #said')]
        .filter((node) => !node.hidden && getComputedStyle(node).display !== 'none' && !node.textContent.trim())
        .map((node) => node.id),
    wide: [...document.querySelectorAll('body *')]
        .filter((node) => node.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((node) => node.tagName + '#' + node.id),
})"""
"""How far the page scrolls sideways, which pills are shown empty, and what sticks out on the right."""


async def check_layout(page: Page) -> None:
    layout: dict[str, Any] = await page.evaluate(LAYOUT)
    assert layout == {"overflow": 0, "emptyPills": [], "wide": []}, layout


async def li(served: Served, path: str, body: dict[str, Any]) -> Any:
    async with served.http.post(served.base + path, json=body,
                                headers={"Authorization": f"Bearer {LI_TOKEN}"}) as response:  # fmt: skip
        assert response.status == 201, await response.text()
        return await response.json()


async def ask_refused_then_granted(page: Page, served: Served) -> str:
    """A leave request with a reason, refused with the arbiter's reason; another, granted: until when (HH:MM)."""
    await page.fill("#leave-reason", "去洗手间")
    await page.click("#leave")
    await page.wait_for_selector("#request-state[data-answer='waiting']", timeout=5_000)
    assert "等待裁判答复" in (await page.text_content("#request-state") or "")
    assert await page.text_content("#said") == "已发送：裁判已收到你的离开申请。"
    async with served.http.get(served.base + "/api/v1/incidents?kind=leave-request",
                               headers={"Authorization": f"Bearer {LI_TOKEN}"}) as response:  # fmt: skip
        (asked,) = await response.json()
    assert asked["summary"] == "youth-f-p2 asks to leave the competition area: 去洗手间"
    await li(served, f"/api/v1/incidents/{asked['id']}/actions", {"action": "dismiss", "note": "本局结束后"})
    await page.wait_for_selector("#request-state[data-answer='refused']", timeout=5_000)
    assert await page.text_content("#request-state") == "裁判未准许离开：本局结束后"
    await check_layout(page)

    await page.fill("#leave-reason", "很急")
    await page.click("#leave")
    await page.wait_for_selector("#request-state[data-answer='waiting']", timeout=5_000)
    granted = await li(served, "/api/v1/players/youth-f-p2/camera/leave", {"minutes": 5, "reason": "准许"})
    await page.wait_for_selector("#request-state[data-answer='granted']", timeout=5_000)
    until = datetime.fromtimestamp(granted["until"] / 1000, ZoneInfo("Asia/Shanghai")).strftime("%H:%M")
    assert await page.text_content("#request-state") == f"裁判准许离开，至 {until}（第36.4.1条）"
    assert await page.is_hidden("#leave-state")  # one pill for the answer, not two
    await li(served, "/api/v1/players/youth-f-p2/camera/messages", {"text": "请坐回镜头前"})
    await page.wait_for_selector("#messages .message", timeout=5_000)
    said = await page.text_content("#messages .message time") or ""
    assert re.fullmatch(r"\d{2}:\d{2}:\d{2}", said), said
    await check_layout(page)
    return until


async def test_the_player_page_in_chinese_on_a_phone(served: Served) -> None:
    load_example_event(served.context.settings)
    link = (await li(served, "/api/v1/players/youth-f-p2/stream-token", {}))["url"]
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + link)
            assert await page.get_attribute("html", "lang") == "zh-CN"
            await page.wait_for_selector("#channel.ok", timeout=5_000)
            assert await page.text_content("#who-name") == "Female Youth Player 2"
            assert await page.text_content("#who-event") == "2021 National Youth Gomoku Championships · Female Youth"
            assert await page.text_content("#who-board") == "第1轮 · 第2台 · 执白"
            assert await page.text_content("#who-opponent") == "对手：Female Youth Player 4"
            assert await page.text_content("#zone") == "时间为 Asia/Shanghai (UTC+08:00)（24 小时制）"
            assert await page.is_hidden("#request-state") and await page.is_hidden("#leave-state")
            await check_layout(page)
            await page.screenshot(path=str(ARTIFACTS / "player-phone-zh.png"), full_page=True)

            until = await ask_refused_then_granted(page, served)
            await page.screenshot(path=str(ARTIFACTS / "player-phone-zh-answered.png"), full_page=True)

            await page.click("#lang")
            assert await page.get_attribute("html", "lang") == "en"
            assert await page.text_content("#who-board") == "Round 1 · board 2 · White"
            assert await page.text_content("#request-state") == f"The arbiter grants leave until {until} (36.4.1)"
            chinese = await leftovers(page, CJK)
            assert not chinese, chinese
            await check_layout(page)
            await page.screenshot(path=str(ARTIFACTS / "player-phone-en.png"), full_page=True)
            await page.reload()
            assert await page.get_attribute("html", "lang") == "en"  # kept in this browser
            await page.wait_for_selector("#request-state[data-answer='granted']", timeout=5_000)
            assert not errors, errors
        finally:
            await browser.close()
