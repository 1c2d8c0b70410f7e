"""The desk's case queue (issue 13) in a real browser: Debian's Chromium, driven by Playwright, against the real app
fed by signed webhooks and the camera checks' incidents.

Li (chief) logs in to the Chinese desk: a pending no-show verdict (``confirm_time_verdicts``) is the first case, with
its article and its facts in words, to confirm or overrule (Wang, an arbiter, may only confirm it: 22.1); sixteen
"another person" findings of one player are one case with sixteen occurrences, their lines and the best evidence on
demand. In English the same; the filters by kind, board and player (by name); the verdict confirmed from the queue
(the game is over, Black wins); the other case dismissed with a reason by the bulk action. Screenshots at 1366x768
(the desk's also at 1920x1080) go to tests/browser/artifacts/.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from playwright.async_api import Browser, Page, async_playwright

from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_dashboard import (
    CHIMES,
    LI_TOKEN,
    Served,
    add_arbiter,
    log_in,
    serve_example_event,
)
from tests.proctor.conftest import Platformer, iso
from tests.video.frames import scene


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The real app on a free port, the example event loaded, Li (chief); deadlines ruled at once (no grace)."""
    async with serve_example_event(tmp_path, deadline_grace_ms=0) as served:
        yield served


async def game(platform: Platformer, name: str, black: str, white: str, start: int, joined: tuple[str, ...]) -> int:
    data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
    status, created = await platform.send("game.created", name, data, at=start - 60_000)
    assert status == 200, created
    for player in joined:
        assert (await platform.send("player.joined", name, {"player": player}, at=start - 30_000))[0] == 200
    return int(created["game"])


async def findings(served: Served, game_id: int, player: str, count: int) -> list[int]:
    """The camera check's "another person" findings, each with a real JPEG snapshot and its end noted."""
    from proctor.camera import DETECTOR  # noqa: PLC0415

    context = served.context
    folder = Path(context.settings.media_dir)
    folder.mkdir(parents=True, exist_ok=True)
    snapshot = bytes(cv2.imencode(".jpg", scene(2, np.random.default_rng(5)))[1])
    ids = []
    start = now_ms() - 20 * 60_000
    for n in range(count):
        name = f"{start + n}-extra-person-{player}.jpg"
        (folder / name).write_bytes(snapshot)
        evidence = {"media": [name], "sha256": hashlib.sha256(snapshot).hexdigest(), "detail": "2 people in view"}
        at = start + 60_000 * n

        def raise_it(connection: Any, batch: Any, at: int = at, evidence: dict[str, Any] = evidence) -> int:
            incident: int = context.service.raise_incident(
                connection, batch, game_id, "extra-person", "extra-person: 2 people in view", source="detector:camera",
                article="36.4.3", evidence=evidence, player_ref=player, at=at, confidence=0.9,
            )  # fmt: skip
            return incident

        incident = await context.writer.submit(raise_it)
        note = f"ended after {12 if n == 3 else 3} s"

        def end_it(connection: Any, batch: Any, incident: int = incident, note: str = note) -> Any:
            return context.service.act_on_incident(
                connection, batch, incident, DETECTOR, "note", note, None, None, now_ms()
            )

        await context.writer.submit(end_it)
        ids.append(incident)
    return ids


async def card_text(page: Page, selector: str) -> str:
    return await page.text_content(selector) or ""


VERDICT = "#cases li.case[data-kind='verdict-pending']"
GROUPED = "#cases li.case[data-kind='extra-person']"
COUNT = "() => document.querySelectorAll('#cases li.case').length === {n}"


async def the_chinese_queue(page: Page) -> None:
    """The pending verdict first, with its article and facts; the sixteen findings as one case, lines and evidence
    on demand."""
    assert await page.text_content("#cases-title") == "案件"
    await page.wait_for_selector(VERDICT, timeout=10_000)  # the no-show, ruled by the server's timer
    assert await page.locator("#cases li.case").first.get_attribute("data-kind") == "verdict-pending"
    text = await card_text(page, VERDICT)
    assert "待确认的裁决" in text and "第 14.3, 35.3 条" in text
    assert "白方（Male Youth Player 3）未到场" in text and "黑胜" in text
    assert await page.eval_on_selector_all(f"{VERDICT} button[data-action]", ACTIONS) == ["confirm", "overrule"]
    assert await page.is_visible(f"{VERDICT} input.minutes")  # the time an overrule gives
    text = await card_text(page, GROUPED)
    assert "区域内有他人" in text and "16 次" in text and "Male Youth Player 2" in text and "第2台" in text
    await page.click(f"{GROUPED} button[data-lines]")
    await page.wait_for_function(
        f'() => document.querySelectorAll("{GROUPED} .occurrences li").length === 16', timeout=5_000
    )
    await page.click(f"{GROUPED} button[data-evidence]")
    still = f"{GROUPED} img.evidence-still"
    await page.wait_for_function(f'() => document.querySelector("{still}")?.naturalWidth > 0', timeout=5_000)
    await page.locator("#queue").screenshot(path=str(ARTIFACTS / "arbiter-cases.png"))


async def the_english_queue(page: Page) -> None:
    await page.click("#lang")
    await page.wait_for_function("() => document.getElementById('cases-title').textContent === 'Cases'")
    text = await card_text(page, VERDICT)
    assert "White (Male Youth Player 3) did not arrive" in text and "Black wins" in text
    assert "another person" in await card_text(page, GROUPED)
    await page.select_option("#cases-kind", "extra-person")
    await page.wait_for_function(COUNT.format(n=1))
    await page.select_option("#cases-kind", "")
    await page.wait_for_function(COUNT.format(n=2))
    await filtered_by_board_and_player(page)
    await views(page, "arbiter-cases-en")


KINDS = "() => [...document.querySelectorAll('#cases li.case')].map(i => i.dataset.kind)"


async def filtered_by_board_and_player(page: Page) -> None:
    """The queue by board (its number) and by player (chosen by name, the platform id only as the tooltip)."""
    boards = await page.eval_on_selector_all("#cases-board option", "os => os.map(o => [o.value, o.text])")
    assert boards == [["", "All boards"], ["1", "B1"], ["2", "B2"]], boards
    await page.select_option("#cases-board", "1")
    await page.wait_for_function(COUNT.format(n=1))
    assert await page.evaluate(KINDS) == ["verdict-pending"]
    await page.select_option("#cases-board", "2")
    await page.wait_for_function(f"() => ({KINDS})().join() === 'extra-person'")
    await page.select_option("#cases-board", "")
    await page.wait_for_function(COUNT.format(n=2))
    players = await page.eval_on_selector_all("#cases-player option", "os => os.map(o => [o.text, o.title])")
    assert players == [["All players", ""]] + [[f"Male Youth Player {n}", f"youth-m-p{n}"] for n in (1, 2, 3, 4)]
    await page.select_option("#cases-player", label="Male Youth Player 2")
    await page.wait_for_function(COUNT.format(n=1))
    assert await page.evaluate(KINDS) == ["extra-person"]
    assert "Male Youth Player 2" in await card_text(page, GROUPED)
    await page.select_option("#cases-player", label="Male Youth Player 1")  # no case of his
    await page.wait_for_function(COUNT.format(n=0))
    assert await page.is_visible("#cases-empty")
    await page.select_option("#cases-player", "")
    await page.wait_for_function(COUNT.format(n=2))


ACTIONS = "buttons => buttons.map(b => b.dataset.action)"


async def an_arbiter_may_not_overrule(browser: Browser, served: Served) -> None:
    """Wang, an arbiter, is offered the verdict's confirmation only: overruling is the chief's or a deputy chief's
    (22.1), and the card says so instead of offering a button the server refuses."""
    add_arbiter(served.context.settings, "Wang", "arbiter", "token-wang")
    context = await browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = await context.new_page()
        await page.goto(served.base + "/arbiter")
        await log_in(page, "Wang")
        await page.wait_for_selector(VERDICT, timeout=10_000)
        assert await page.eval_on_selector_all(f"{VERDICT} button[data-action]", ACTIONS) == ["confirm"]
        assert await page.locator(f"{VERDICT} input.minutes").count() == 0
        assert "推翻裁决只能由裁判长或副裁判长决定（第 22.1 条）" in await card_text(page, VERDICT)
    finally:
        await context.close()


BADGE = "() => document.querySelector('#boards .board[data-game=\"{game}\"]')?.dataset.open === '{n}'"


async def acted_on_from_the_queue(page: Page, served: Served, grouped_game: int) -> None:
    """The verdict confirmed (the game over, Black wins by no-show); the other case dismissed by the bulk action,
    and its sixteen incidents no longer counted on its board's badge, also after a reload."""
    await page.fill(f"{VERDICT} input.reason", "absent, no message from the player")
    await page.click(f"{VERDICT} button[data-action=confirm]")
    await page.wait_for_selector(VERDICT, state="detached", timeout=5_000)  # the open cases only
    li = {"Authorization": f"Bearer {LI_TOKEN}"}
    url = f"{served.base}/api/v1/platforms/web/games/youth-m-r1-b1"
    state = await (await served.http.get(url, headers=li)).json()
    assert state["result"]["winner"] == "black" and state["result"]["reason"] == "no-show"
    await page.wait_for_function(BADGE.format(game=grouped_game, n=16), timeout=5_000)
    await page.check(f"{GROUPED} input.pick")
    await page.fill("#bulk-reason", "the coach behind him, allowed by the organiser")
    await page.click("#bulk-dismiss")
    await page.wait_for_selector("#cases li.case", state="detached", timeout=5_000)
    assert await page.is_visible("#cases-empty")
    await page.select_option("#cases-status", "closed")
    await page.wait_for_function(COUNT.format(n=2))
    statuses = await page.eval_on_selector_all("#cases li.case", "items => items.map(i => i.dataset.status)")
    assert sorted(statuses) == ["confirmed", "dismissed"]
    await page.wait_for_function(BADGE.format(game=grouped_game, n=0), timeout=5_000)
    assert await page.is_hidden(f"#boards .board[data-game='{grouped_game}'] .badge")
    await page.reload()
    await page.wait_for_selector(f"#boards .board[data-game='{grouped_game}'][data-seq]", timeout=10_000)
    await page.wait_for_function(BADGE.format(game=grouped_game, n=0), timeout=5_000)


async def test_the_case_queue_groups_findings_and_confirms_a_pending_verdict(served: Served) -> None:
    platform = served.platform
    other = await game(platform, "youth-m-r1-b2", "youth-m-p4", "youth-m-p2", now_ms() - 60_000,
                       ("youth-m-p4", "youth-m-p2"))  # fmt: skip
    await findings(served, other, "youth-m-p2", 16)
    await game(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3", now_ms() + 500, ("youth-m-p1",))
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Li")
            await the_chinese_queue(page)
            await an_arbiter_may_not_overrule(browser, served)
            await the_english_queue(page)
            await acted_on_from_the_queue(page, served, other)
            assert errors == []
        finally:
            await browser.close()


async def test_an_escalation_for_the_chief_sounds_on_the_chiefs_desk_only(served: Served) -> None:
    """A pending verdict passes its confirmation deadline (the time passed in): its case escalates to the chief
    (``alert_for: chief``). Li's desk (chief) chimes; Wang's (arbiter) shows the alert without a sound."""
    await game(served.platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3", now_ms() + 500, ("youth-m-p1",))
    add_arbiter(served.context.settings, "Wang", "arbiter", "token-wang")
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            desks = {}
            errors: list[str] = []
            for name in ("Li", "Wang"):
                page = await (await browser.new_context(viewport={"width": 1366, "height": 768})).new_page()
                page.on("pageerror", lambda error: errors.append(str(error)))
                await page.goto(served.base + "/arbiter")
                await log_in(page, name)
                await page.wait_for_selector(VERDICT, timeout=10_000)
                await page.wait_for_selector("#stream-state[data-state='connected']", timeout=5_000)
                desks[name] = page
            await desks["Li"].wait_for_timeout(500)  # the verdict's own alerts are heard
            before = {name: int(await page.evaluate(CHIMES)) for name, page in desks.items()}
            li = {"Authorization": f"Bearer {LI_TOKEN}"}
            async with served.http.get(f"{served.base}/api/v1/cases?kind=verdict-pending", headers=li) as response:
                (case,) = (await response.json())["cases"]
            context = served.context
            escalated = await context.writer.submit(
                lambda connection, batch: context.service.escalate_cases(connection, batch, case["opened"] + 600_000)
            )
            assert escalated == [case["id"]]
            for page in desks.values():
                await page.wait_for_selector(f"{VERDICT}.urgency-0 .alert", timeout=5_000)
            await desks["Li"].wait_for_function(f"() => ({CHIMES})() > {before['Li']}", timeout=3_000)
            await desks["Wang"].wait_for_timeout(500)
            assert int(await desks["Wang"].evaluate(CHIMES)) == before["Wang"]
            assert errors == []
        finally:
            await browser.close()
