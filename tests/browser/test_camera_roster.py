"""The desk's camera roster, search and keys (issue 13) in a real browser: Debian's Chromium, driven by Playwright,
against the real app with the example event (one player renamed 张伟, for a Chinese name).

Li (chief) opens the roster of the Male Youth section: its four players by name, none with a link. He issues the
section's links as a CSV (downloaded): its rows are the section's players, and a link from it opens that player's
page. He issues them again for the printed sheet (names, boards, links, QR codes), re-issues one player's link (the
old link's page now says it was replaced, 404; the new one opens), and reads it all in English. Then the header's
search jumps to a board by a Chinese name, by a Latin name and by number, and to a case by its id; "/" focuses the
search, j and k move through the case queue, Enter opens a case's lines, x selects the current case for the bulk
dismissal; a case not on the loaded page is asked of the server by its id and shown; "?" shows every key.
Screenshots at 1366x768 and 1920x1080 go to tests/browser/artifacts/.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from playwright.async_api import Browser, Dialog, Page, async_playwright

from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import EVENT_EXAMPLE, LI_TOKEN, Served, add_arbiter, log_in, serve
from tests.browser.test_desk_languages import CJK, leftovers
from tests.proctor.conftest import register_platform
from tests.proctor.test_camera import ScriptedCamera, connect

SECTION = "national-youth-2021/youth-m"
NAMES = ["Male Youth Player 1", "张伟", "Male Youth Player 3", "Male Youth Player 4"]
ROWS = "#roster-rows tr"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The real app on a free port, the example event with Male Youth Player 2 named 张伟, and Li (chief)."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"), models_dir=str(tmp_path / "models"),
                        deadline_grace_ms=600_000)  # fmt: skip
    event = tmp_path / "event.toml"
    event.write_text(EVENT_EXAMPLE.read_text(encoding="utf-8").replace('"Male Youth Player 2"', '"张伟"'), "utf-8")
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, event, now=0)
    engine.dispose()
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    async with serve(settings, secret) as served:
        yield served


def accept_dialogs(page: Page) -> None:
    """Confirm every confirm() the page asks (issuing every link, re-issuing one)."""

    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    page.on("dialog", accept)


async def player_page_name(browser: Browser, link: str) -> str:
    page = await browser.new_page()
    try:
        await page.goto(link)
        await page.wait_for_function("() => document.getElementById('who-name')?.textContent", timeout=5_000)
        return await page.text_content("#who-name") or ""
    finally:
        await page.close()


async def open_roster(page: Page) -> None:
    await page.click("#roster-open")
    await page.wait_for_selector("#roster[open]")
    await page.select_option("#roster-section", SECTION)
    await page.wait_for_function(f"() => document.querySelectorAll('{ROWS}').length === 4", timeout=5_000)


async def states(page: Page) -> list[str]:
    found: list[str] = await page.eval_on_selector_all(ROWS, "rows => rows.map(r => r.dataset.state)")
    return found


async def the_csv_export(page: Page, browser: Browser) -> None:
    """The section's links as a CSV: one row a player, each link opens that player's page."""
    assert await page.text_content("#roster-title") == "摄像头名单"
    names = await page.eval_on_selector_all(f"{ROWS} td:nth-child(2)", "cells => cells.map(c => c.textContent)")
    assert names == NAMES
    assert await states(page) == ["no-link"] * 4
    assert "未发链接" in (await page.text_content(ROWS) or "")
    assert "Asia/Shanghai" in (await page.text_content("#roster-zone") or "")
    await views(page, "arbiter-roster-zh")
    async with page.expect_download() as info:
        await page.click("#roster-csv")
    download = await info.value
    assert download.suggested_filename == "national-youth-2021-youth-m-stream-links.csv"
    text = Path(await download.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["name"] for row in rows] == NAMES
    assert [row["board"] for row in rows] == ["1", "2", "1", "2"]
    assert all(row["link"].startswith("http://127.0.0.1:") and "/play/" in row["link"] for row in rows)
    assert await player_page_name(browser, rows[1]["link"]) == "张伟"
    await page.wait_for_function(
        f"() => [...document.querySelectorAll('{ROWS}')].every(r => r.dataset.state === 'not-connected')",
        timeout=5_000,
    )
    assert "已为 4 名棋手发链接" in (await page.text_content("#roster-answer") or "")


async def read_qr(page: Page, selector: str) -> str:
    """What a QR code on the page says, read from a screenshot of it as a phone would: larger, with the quiet zone
    around it that the detector needs; tried again when a screenshot taken while the page settles (after the views'
    resizes) does not decode."""
    decoded = ""
    for _ in range(3):
        shot = await page.locator(selector).first.screenshot(animations="disabled")
        image = cv2.imdecode(np.frombuffer(shot, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert image is not None
        image = cv2.copyMakeBorder(cv2.resize(image, None, fx=4, fy=4, interpolation=cv2.INTER_NEAREST),
                                   32, 32, 32, 32, cv2.BORDER_CONSTANT, value=255)  # fmt: skip
        decoded, _points, _code = cv2.QRCodeDetector().detectAndDecode(image)
        if decoded:
            break
        await page.wait_for_timeout(200)
    return str(decoded)


async def the_printed_sheet_and_a_reissue(page: Page, browser: Browser, served: Served) -> None:
    """Every link issued again for the sheet (the CSV's stop working); one re-issued: its old link is refused."""
    await page.select_option("#roster-which", "all")
    await page.click("#roster-issue")
    await page.wait_for_selector("#roster-sheet:not([hidden])", timeout=5_000)
    sheet = "#roster-sheet-body tbody tr"
    assert await page.locator(sheet).count() == 4
    assert await page.eval_on_selector_all(f"{sheet} img.qr", "images => images.every(i => i.naturalWidth > 0)")
    links = await page.eval_on_selector_all(f"{sheet} td.link", "cells => cells.map(c => c.textContent)")
    await views(page, "arbiter-roster-sheet-zh", selector="#roster")
    assert await read_qr(page, f"{sheet} img.qr") == links[0]  # a phone's camera reads the link
    # The print button prints the sheet alone (the print dialog itself is the browser's, not the page's).
    await page.evaluate("() => { window.__printed = []; window.print = () => window.__printed.push("
                        "document.getElementById('roster-print').textContent); }")  # fmt: skip
    await page.click("#roster-print-button")
    printed = await page.evaluate("() => window.__printed")
    assert len(printed) == 1 and "摄像头链接" in printed[0] and "Asia/Shanghai" in printed[0] and links[3] in printed[0]
    await page.evaluate("() => document.body.classList.add('printing-roster')")
    await page.emulate_media(media="print")
    await page.screenshot(path=str(ARTIFACTS / "arbiter-roster-print.png"), full_page=True)
    await page.emulate_media(media="screen")
    await page.evaluate("() => document.body.classList.remove('printing-roster')")

    await page.click(f"{ROWS}[data-player='youth-m-p3'] button.reissue")
    fresh = f"{ROWS}[data-player='youth-m-p3'] td.new-link a"
    await page.wait_for_selector(fresh, timeout=5_000)
    new_link = await page.text_content(fresh) or ""
    assert new_link != links[2] and "/play/" in new_link
    old = await browser.new_page()
    try:
        response = await old.goto(links[2])
        assert response is not None and response.status == 404
        said = await old.text_content("body") or ""
        assert "此链接已被新链接取代" in said and "this link was replaced by a new one" in said
    finally:
        await old.close()
    assert await player_page_name(browser, new_link) == "Male Youth Player 3"
    assert await player_page_name(browser, links[0]) == "Male Youth Player 1"  # the others still work
    await a_camera_comes_and_goes(page, served, new_link.rsplit("/", 1)[1])

    await page.click("#roster-close")  # the roster is modal: the header's language switch is behind it
    await page.click("#lang")
    await page.click("#roster-open")
    await page.wait_for_function("() => document.getElementById('roster-title').textContent === 'Camera roster'")
    await page.wait_for_function(f"() => document.querySelector('{ROWS}')?.textContent.includes('Not connected')")
    assert await page.input_value("#roster-section") == SECTION  # the section chosen before
    chinese = await leftovers(page, CJK)
    assert not chinese, chinese
    await views(page, "arbiter-roster-en")
    await page.click("#roster-close")


async def a_camera_comes_and_goes(page: Page, served: Served, token: str) -> None:
    """A real aiortc peer streams with the new link: connected, the setup approved, then lost."""
    row = f"{ROWS}[data-player='youth-m-p3']"
    pc = await connect(served.platform, token, ScriptedCamera([(120, 1)]))
    try:
        await page.wait_for_selector(f"{row}[data-state='connected']", timeout=15_000)
        assert re.search(r"自 \d{2}:\d{2}:\d{2}", await page.text_content(f"{row} td:nth-child(5)") or "")
        approved = await served.http.post(
            served.base + "/api/v1/players/youth-m-p3/camera/approval", json={"approved": True, "note": ""},
            headers={"Authorization": f"Bearer {LI_TOKEN}"},
        )  # fmt: skip
        assert approved.status == 201
        await page.wait_for_selector(f"{row} td.setup[data-approved='true']", timeout=10_000)
        assert "已批准（Li" in (await page.text_content(f"{row} td.setup") or "")
        assert await page.get_attribute("#roster-counts [data-state='connected']", "data-count") == "1"
        await views(page, "arbiter-roster-connected-zh", selector="#roster")
    finally:
        await pc.close()
    await page.wait_for_selector(f"{row}[data-state='lost']", timeout=15_000)


async def case_for(served: Served, game_id: int, player: str) -> int:
    response = await served.http.post(
        served.base + "/api/v1/incidents", headers={"Authorization": f"Bearer {LI_TOKEN}"},
        json={"game": game_id, "kind": "extra-person", "article": "36.4.2", "player": player,
              "summary": f"someone behind {player}"},
    )  # fmt: skip
    assert response.status == 201
    cases = await (await served.http.get(served.base + f"/api/v1/cases?player={player}",
                                         headers={"Authorization": f"Bearer {LI_TOKEN}"})).json()  # fmt: skip
    return int(cases["cases"][0]["id"])


async def search_for(page: Page, text: str, first_kind: str) -> None:
    await page.fill("#desk-search", text)
    await page.wait_for_function(
        f"() => document.querySelector('#search-results li[aria-selected=true]')?.dataset.kind === {first_kind!r}",
        timeout=5_000,
    )


async def found_board(page: Page, game_id: int) -> None:
    await page.wait_for_selector(f"article.board.found[data-game='{game_id}']", timeout=5_000)
    assert await page.evaluate("() => document.activeElement.dataset.game") == str(game_id)


async def the_search_and_keys(page: Page, boards: dict[str, int], cases: list[int], closed: int) -> None:
    await page.wait_for_selector("#cases li.case", timeout=5_000)
    await page.keyboard.press("/")
    assert await page.evaluate("() => document.activeElement.id") == "desk-search"
    await search_for(page, "张", "board")  # Zhang Wei plays board 2
    results = await page.eval_on_selector_all("#search-results li", "items => items.map(i => i.dataset.kind)")
    assert "player" in results and "case" in results
    await views(page, "arbiter-search-zh")
    await page.keyboard.press("Enter")
    await found_board(page, boards["b2"])
    await page.keyboard.press("/")
    await search_for(page, "male youth player 3", "board")
    await page.keyboard.press("Enter")
    await found_board(page, boards["b1"])
    await page.keyboard.press("/")
    await search_for(page, "2", "board")
    assert await page.get_attribute("#search-results li[aria-selected=true]", "data-id") == str(boards["b2"])
    await page.keyboard.press("Escape")
    await page.keyboard.press("/")
    await search_for(page, f"#{cases[1]}", "case")
    await page.keyboard.press("Enter")
    await page.wait_for_selector(f"#cases li.case.kbd-current[data-case='{cases[1]}']", timeout=5_000)

    order = await page.eval_on_selector_all("#cases li.case", "items => items.map(i => Number(i.dataset.case))")
    at = order.index(cases[1])
    await page.keyboard.press("k" if at > 0 else "j")
    other = order[at - 1] if at > 0 else order[at + 1]
    await page.wait_for_selector(f"#cases li.case.kbd-current[data-case='{other}']", timeout=5_000)
    await page.keyboard.press("Enter")
    await page.wait_for_selector(f"#cases li.case[data-case='{other}'] .occurrences li", timeout=5_000)
    assert await page.locator("#cases li.case.kbd-current").count() == 1  # kept across the queue's redraw
    await x_selects_the_current_case(page, other)
    await a_case_not_on_the_page_is_looked_up(page, closed)
    await the_keys_help(page)


async def x_selects_the_current_case(page: Page, other: int) -> None:
    """The current case selected for the bulk dismissal, then no longer."""
    await page.keyboard.press("x")
    await page.wait_for_selector(f"#cases li.case[data-case='{other}'] input.pick:checked", timeout=3_000)
    assert await page.is_visible("#cases-bulk") and await page.text_content("#bulk-dismiss") == "驳回所选 1 件"
    await page.keyboard.press("x")
    await page.wait_for_selector("#cases-bulk", state="hidden", timeout=3_000)
    assert not await page.is_checked(f"#cases li.case[data-case='{other}'] input.pick")


async def a_case_not_on_the_page_is_looked_up(page: Page, closed: int) -> None:
    """A case that is not on the loaded page (dismissed: the queue shows the open ones) is asked of the server."""
    assert await page.locator(f"#cases li.case[data-case='{closed}']").count() == 0
    await page.keyboard.press("/")
    await search_for(page, f"#{closed}", "case")
    assert "到服务器查找此案件" in (await page.text_content("#search-results li[aria-selected=true]") or "")
    await page.keyboard.press("Enter")
    found = f"#cases li.case.kbd-current[data-case='{closed}'][data-status='dismissed'][data-found='true']"
    await page.wait_for_selector(found, timeout=5_000)
    assert "搜索找到的案件" in (await page.text_content(found) or "")
    await page.keyboard.press("/")
    await search_for(page, "#99999", "case")
    await page.keyboard.press("Enter")
    await page.wait_for_selector("#cases-answer.refused:text('找不到案件 #99999')", timeout=5_000)


async def the_keys_help(page: Page) -> None:
    """Every key in the help, in the page's language; the search in English."""
    await page.keyboard.press("?")
    await page.wait_for_selector("#keys-help[open]")
    keys = await page.eval_on_selector_all("#keys-rows kbd", "items => items.map(i => i.textContent)")
    assert keys == ["/", "j", "k", "Enter", "x", "r", "?", "Esc", "↑ ↓"], keys
    help_text = await page.text_content("#keys-rows") or ""
    assert "下一个案件" in help_text and "批量驳回" in help_text, help_text
    await views(page, "arbiter-keys-zh")
    await page.keyboard.press("?")
    await page.wait_for_function("() => !document.getElementById('keys-help').open")
    await page.click("#lang")
    await page.keyboard.press("?")
    assert "next case" in (await page.text_content("#keys-rows") or "")
    await page.keyboard.press("Escape")
    await page.keyboard.press("/")
    await search_for(page, "Player 4", "board")
    assert await page.get_attribute("#desk-search", "placeholder") == "Find (/)"
    await views(page, "arbiter-search-en")
    await page.keyboard.press("Escape")


async def test_the_roster_issues_exports_and_reissues_links(served: Served) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768}, accept_downloads=True)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            accept_dialogs(page)
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await open_roster(page)
            await the_csv_export(page, browser)
            await the_printed_sheet_and_a_reissue(page, browser, served)
            assert errors == []
        finally:
            await browser.close()


async def test_the_search_jumps_and_the_keys_move_through_the_queue(served: Served) -> None:
    platform = served.platform
    start = now_ms() - 60_000
    boards = {
        "b1": await game(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3", start, ("youth-m-p1", "youth-m-p3")),
        "b2": await game(platform, "youth-m-r1-b2", "youth-m-p4", "youth-m-p2", start, ("youth-m-p4", "youth-m-p2")),
    }
    cases = [await case_for(served, boards["b1"], "youth-m-p1"), await case_for(served, boards["b2"], "youth-m-p2")]
    closed = await case_for(served, boards["b1"], "youth-m-p3")
    response = await served.http.post(served.base + f"/api/v1/cases/{closed}/actions",
                                      json={"action": "dismiss", "reason": "a poster on the wall"},
                                      headers={"Authorization": f"Bearer {LI_TOKEN}"})  # fmt: skip
    assert response.status == 201
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1920, "height": 1080})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await page.wait_for_selector(f"article.board[data-game='{boards['b2']}']", timeout=5_000)
            await the_search_and_keys(page, boards, cases, closed)
            assert errors == []
        finally:
            await browser.close()
