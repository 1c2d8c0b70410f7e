"""The desk in each language, and what it asks of the server (issue 13): Debian's Chromium, driven by Playwright,
against the real app fed by signed webhooks.

With a round of games, incidents and cases on it, the English desk shows no Chinese character outside user data (the
rendered text, titles, placeholders, buttons and options; after switching on the page and after a reload), and the
Chinese desk no English UI word; times are in the event's zone, named. At 1366x768 the top bar is one line in both
languages (its height is one line's, the search typed in or not), nothing in it overlapping, outside it or cut without
a tooltip; the arbiter's sound and keys are a menu under their name. A board whose players have no stream link asks
for their cameras once, not every 4 s, and again when a link is issued. Screenshots go to tests/browser/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Page, Request, async_playwright

from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_dashboard import (
    LI_TOKEN,
    Served,
    detector_incident,
    load_example_event,
    log_in,
    send,
    served,
    set_up_round,
)

__all__ = ["served"]  # the fixture, imported from the arbiters' dashboard test

pytestmark = pytest.mark.asyncio

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
ENGLISH_UI = re.compile(
    r"\b(Live|Feed|Cam|Black|White|wins|Draw|Cases|Incident|Dismiss|Confirm|Log out|Sound|Section|boards|Open|open|"
    r"Load more|Evidence|Occurrences|Kind|Status|Any status|All kinds|Handled|Submit|Close|Reason|Player|Game)\b"
)
SERVER_ENGLISH = (
    "2 faces in view",
    "the camera is covered: brightness 8, contrast 1.2",
    "nobody in front of the camera",
    "the platform shows",
    "feed gap: seq",
)
"""The server's English for the desk's cases (proctor.server_words): on the English desk, none on the Chinese one."""
TEXTS = """() => {
    const raw = new Set(document.querySelectorAll('[data-raw]'));
    const visible = [];
    const walk = (node) => {
        for (const child of node.childNodes) {
            if (child.nodeType === Node.TEXT_NODE) {
                if (child.textContent.trim()) {
                    visible.push([child.textContent.trim(), child.parentElement.outerHTML.slice(0, 160)]);
                }
            } else if (child.nodeType === Node.ELEMENT_NODE && !raw.has(child)
                       && !['SCRIPT', 'STYLE', 'TEMPLATE'].includes(child.tagName)) {
                const style = getComputedStyle(child);
                if (child.tagName !== 'OPTION' && child.tagName !== 'DIALOG'
                    && (child.hidden || style.display === 'none')) continue;
                walk(child);
            }
        }
    };
    walk(document.body);
    const attributes = [...document.querySelectorAll('[title], [placeholder], [aria-label]')]
        .filter((node) => ![...raw].some((r) => r.contains(node)))
        .flatMap((node) => ['title', 'placeholder', 'aria-label'].map((a) => node.getAttribute(a)).filter(Boolean)
                             .map((text) => [text, node.outerHTML.slice(0, 160)]));
    return [[document.title, 'title'], ...visible, ...attributes];
}"""
"""Every text a person may see on the page (dialogs included), without what is marked as user data, each with where
it is."""


TOP_BAR = """() => {
    const bar = document.querySelector('header.top');
    const controls = [...bar.querySelectorAll('h1, button, input, .pill, #time-zone, #who')]
        .filter((node) => node.getClientRects().length > 0 && !node.closest('[role=menu]'));
    const boxes = controls.map((node) => [node, node.getBoundingClientRect()]);
    const probe = document.createElement('button');
    probe.textContent = 'X';
    probe.style.whiteSpace = 'nowrap';
    bar.append(probe);
    const line = probe.getBoundingClientRect().height;
    probe.remove();
    const name = (node) => node.id || node.tagName.toLowerCase();
    const frame = bar.getBoundingClientRect();
    const problems = [];
    for (const [node, box] of boxes) {
        if (box.left < frame.left || box.right > Math.min(frame.right, innerWidth) || box.top < frame.top
            || box.bottom > frame.bottom) problems.push(`${name(node)} outside the bar`);
        for (const [other, next] of boxes) {
            if (node === other || node.contains(other) || other.contains(node)) continue;
            const width = Math.min(box.right, next.right) - Math.max(box.left, next.left);
            const height = Math.min(box.bottom, next.bottom) - Math.max(box.top, next.top);
            if (width > 0.5 && height > 0.5 && name(node) < name(other)) {
                problems.push(`${name(node)} overlaps ${name(other)}`);
            }
        }
    }
    for (const node of bar.querySelectorAll('*')) {
        if (node.getClientRects().length === 0 || node.closest('[role=menu]')) continue;
        const cut = node.scrollWidth > node.clientWidth + 1 || node.scrollHeight > node.clientHeight + 1;
        const said = node.textContent.trim();
        const tip = node.title || node.closest('[title]')?.title;
        if (cut && node.tagName !== 'INPUT' && tip !== said) problems.push(`${name(node)} cut without a tooltip`);
    }
    const height = Math.max(...boxes.map(([, b]) => b.bottom)) - Math.min(...boxes.map(([, b]) => b.top));
    return { height, line, bar: frame.height, problems };
}"""
"""The top bar at the page's size: how tall its controls stand (from the highest top to the lowest bottom), one
line's height (a one-line button of the bar: a probe, in its font), the bar's own height, and what is wrong: a control
outside the bar or the window, two that overlap, a text cut without its whole as a tooltip."""


async def one_line_top_bar(page: Page) -> None:
    """The top bar's controls stand on one line (its height is one line's), within it, apart and uncut; also while
    the search, wider when focused, is typed in."""
    for searching in (False, True):
        if searching:
            await page.focus("#desk-search")
            await page.wait_for_timeout(300)  # its width's transition
        bar: dict[str, Any] = await page.evaluate(TOP_BAR)
        assert bar["height"] == pytest.approx(bar["line"], abs=0.5), (searching, bar)
        assert not bar["problems"], (searching, bar)
    await page.evaluate("() => document.activeElement.blur()")


async def desk_views(page: Page, name: str) -> None:
    """The desk's screenshots at both sizes, then, back at 1366x768, its top bar on one line."""
    await views(page, name)
    assert page.viewport_size == {"width": 1366, "height": 768}
    await one_line_top_bar(page)


async def the_arbiters_menu(page: Page) -> None:
    """The arbiter's sound and keys: a menu under their name, inside the window (a screenshot), closed by Escape."""
    await page.click("#who-menu")
    menu = await page.locator("#who-items").bounding_box()
    assert menu is not None and menu["x"] >= 0 and menu["x"] + menu["width"] <= 1366, menu
    items = await page.locator("#who-items [role=menuitem]").all_text_contents()
    assert items == ["Sound: on", "Keyboard shortcuts?"], items
    await page.screenshot(path=str(ARTIFACTS / "desk-en-menu.png"), clip={"x": 0, "y": 0, "width": 1366, "height": 160})
    await page.keyboard.press("Escape")
    assert await page.is_hidden("#who-items")


async def leftovers(page: Page, pattern: re.Pattern[str]) -> str:
    """The texts that match, with where each is, one a line; empty when none."""
    found: list[list[str]] = await page.evaluate(TEXTS)
    return "\n".join(sorted({f"{text}  @ {where}" for text, where in found if pattern.search(text)}))


async def a_full_desk(served: Served) -> dict[str, int]:
    """The example event (Asia/Shanghai), the twelve games of the dashboard's round with their incidents and cases,
    and an arbiter's case."""
    load_example_event(served.context.settings)
    games = await set_up_round(served)
    # More of the camera checks' findings, as the detector words them (the server says them in both languages).
    await detector_incident(served, games["g5"], "extra-person", "36.4.2", "g5-w", "2 faces in view")
    await detector_incident(served, games["g6"], "camera-covered", "36.4", "g6-b", "brightness 8, contrast 1.2")
    response = await served.http.post(
        served.base + "/api/v1/incidents", headers={"Authorization": f"Bearer {LI_TOKEN}"},
        json={"game": games["g1"], "kind": "extra-person", "article": "36.4.2", "player": "g1-w",
              "summary": "someone behind g1-w"},
    )  # fmt: skip
    assert response.status == 201
    return games


async def test_the_english_desk_has_no_chinese_and_the_chinese_desk_no_english(served: Served) -> None:
    await a_full_desk(served)
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await page.wait_for_selector("#boards .board[data-game]", timeout=5_000)
            await send(served.platform, "resign", "g11", {"player": "g11-w"}, now_ms())  # a result on the desk
            await page.wait_for_selector("#boards .board[data-status='over']", timeout=5_000)
            await page.wait_for_selector("#cases .case", timeout=5_000)
            await page.wait_for_selector("#stream-state[data-state='connected']", timeout=5_000)
            await page.wait_for_timeout(1_500)  # the cameras asked, the boards drawn
            zone = await page.text_content("#time-zone") or ""
            assert zone == "时区：Asia/Shanghai (UTC+08:00)"
            english = await leftovers(page, ENGLISH_UI)
            assert not english, english
            queue = await page.text_content("#cases") or ""
            assert "之后平台显示" in queue and "数据流缺口：序号" in queue, queue  # the summaries' facts in words
            # The server's texts in Chinese (proctor.server_words), none of its English left.
            for said in ("画面中有 2 张脸", "摄像头被遮挡：亮度 8，对比度 1.2", "镜头前无人"):
                assert said in queue, (said, queue)
            for english in SERVER_ENGLISH:
                assert english not in queue, (english, queue)
            await desk_views(page, "desk-zh")

            await page.click("#lang")  # switched on the page: everything already shown is said again
            await page.wait_for_timeout(500)
            chinese = await leftovers(page, CJK)
            assert not chinese, chinese
            assert await page.text_content("#time-zone") == "Times: Asia/Shanghai (UTC+08:00)"
            cases = await page.text_content("#cases") or ""
            assert "the platform shows 0:01, the service" in cases and " ms " not in cases, cases
            for said in SERVER_ENGLISH:
                assert said in cases, (said, cases)
            await desk_views(page, "desk-en")
            await the_arbiters_menu(page)
            await page.reload()
            await page.wait_for_selector("#who[data-name='Li']", timeout=5_000)
            await page.wait_for_selector("#cases .case", timeout=5_000)
            await page.wait_for_timeout(1_500)
            chinese = await leftovers(page, CJK)
            assert not chinese, chinese
            # Times in the event's zone, 24-hour: the case cards' last time is HH:MM:SS in Asia/Shanghai.
            shown = await page.eval_on_selector_all("#cases time", "ts => ts.map(t => [t.dateTime, t.textContent])")
            assert shown
            for iso, text in shown:
                assert re.fullmatch(r"\d{2}:\d{2}:\d{2}", text), text
                hour = (int(iso[11:13]) + 8) % 24
                assert text.startswith(f"{hour:02d}:"), (iso, text)
            assert not errors, errors
        finally:
            await browser.close()


async def test_boards_without_a_stream_link_ask_for_their_cameras_once(served: Served) -> None:
    """Twelve boards, no stream link: each player's camera is asked once in 10 s (not 2-3 times), and again only
    after a link is issued to one of them, who is then followed every 4 s."""
    await a_full_desk(served)
    asked: dict[str, int] = {}

    def count(request: Request) -> None:
        match = re.search(r"/api/v1/players/([^/]+)/camera$", request.url)
        if match:
            asked[match.group(1)] = asked.get(match.group(1), 0) + 1

    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1920, "height": 1080})
            page.on("request", count)
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await page.wait_for_selector("[data-game] .ind.cam.black[data-state='none']", timeout=10_000)
            await page.wait_for_timeout(10_000)
            assert asked and all(n == 1 for n in asked.values()), asked
            shown: Any = await page.eval_on_selector_all(
                "[data-game] .ind.cam[data-state='none']", "nodes => nodes.length"
            )
            assert shown >= 2 * 4  # the boards on screen say "no camera"
            issued = await served.http.post(served.base + "/api/v1/players/g1-b/stream-token",
                                            headers={"Authorization": f"Bearer {LI_TOKEN}"})  # fmt: skip
            assert issued.status == 201
            await page.wait_for_selector("[data-game] .ind.cam.black[data-state='lost']", timeout=5_000)
            await page.wait_for_timeout(9_000)
            assert 3 <= asked["g1-b"] <= 5, asked  # asked at once, then every 4 s
            others = {player: n for player, n in asked.items() if player != "g1-b"}
            assert all(n == 1 for n in others.values()), others
        finally:
            await browser.close()
