"""Acting on cases from the desk (issue 13) in a real browser: Debian's Chromium, driven by Playwright, against the real
app.

The penalty dialog previews what the ladder gives before anything is written: Wang (arbiter) sees that the first 36.2
of a player is a warning he may give, and gives it; the second is a violation, which the dialog says he may not give
and why (16.2), with no way to submit. Li (chief arbiter), in English, sees that 36.4.3 (this event: a loss) loses the
game: the first click only asks again, the second gives it, and the board's menu then offers nothing that changes a
finished game. Before that, the menu offers pause but not resume while the clocks run, and says what changed; of a
player's camera it offers only what can apply (no prompt without a connected camera, nothing without a stream link,
no prompt or leave once the game is over) and says why.

A leave request is a case with "grant leave" (minutes) and "refuse" (with a reason) on its card; the player's page
shows each answer. Screenshots at 1366x768 (the desk's also at 1920x1080) go to tests/browser/artifacts/.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import (
    LI_TOKEN,
    Served,
    detector_incident,
    load_example_event,
    log_in,
    send,
    served,
)
from tests.browser.test_player_phone import li

__all__ = ["served"]  # the fixture, imported from the arbiters' dashboard test

pytestmark = pytest.mark.asyncio

PREVIEW = "#act-preview"
OPEN = "#cases li.case[data-kind='{kind}'][data-status='open']"


def load_event(served: Served) -> None:
    load_example_event(served.context.settings)


async def result(served: Served, name: str) -> Any:
    url = f"{served.base}/api/v1/platforms/web/games/{name}"
    async with served.http.get(url, headers={"Authorization": f"Bearer {LI_TOKEN}"}) as response:
        return (await response.json())["result"]


async def text(page: Page, selector: str) -> str:
    return await page.text_content(selector) or ""


async def control(page: Page, game_id: int, name: str, reason: str) -> str:
    """A board control from the board's menu: the server's answer in words."""
    await page.click(f"[data-game='{game_id}'] button[data-menu]")
    await page.click(f"#ctl-menu button[data-control='{name}']")
    await page.fill("#ctl-text", reason)
    await page.click("#ctl-submit")
    await page.wait_for_function("() => document.getElementById('ctl-answer').dataset.status > '0'", timeout=5_000)
    said = await text(page, "#ctl-answer")
    await page.click("#ctl-close")
    return said


async def offered(page: Page, game_id: int) -> tuple[list[str], str]:
    """The game controls the board's menu offers, and the ones it says do not apply now."""
    await page.click(f"[data-game='{game_id}'] button[data-menu]")
    controls = await page.eval_on_selector_all(
        "#ctl-menu .actions:not([data-player]) button", "buttons => buttons.map(b => b.dataset.control)"
    )
    left = await page.get_attribute("#ctl-menu [data-not-offered]", "data-not-offered") or ""
    await page.click("#ctl-close")
    return controls, left


CAMERA = """() => Object.fromEntries([...document.querySelectorAll('#ctl-menu .actions[data-player]')].map((row) => [
    row.dataset.player,
    {camera: row.dataset.camera, offered: [...row.querySelectorAll('button[data-control]')].map(b => b.dataset.control),
     live: row.querySelectorAll('button[data-live]').length,
     left: document.querySelector(`#ctl-menu p[data-not-offered][data-player='${row.dataset.player}']`)?.textContent}
]))"""


async def camera_offered(page: Page, game_id: int, asked: dict[str, str]) -> dict[str, Any]:
    """Each player's camera controls the board's menu offers (once their cameras are asked as ``asked`` says), the
    live views, and the line that says what is not offered and why."""
    await page.click(f"[data-game='{game_id}'] button[data-menu]")
    for player, state in asked.items():
        row = f"#ctl-menu .actions[data-player='{player}'][data-camera='{state}']"
        await page.wait_for_selector(row, state="attached", timeout=8_000)
    offered: dict[str, Any] = await page.evaluate(CAMERA)
    await page.click("#ctl-close")
    return offered


NAMES = "nodes => nodes.map(n => [n.textContent, n.title])"


async def the_board_and_its_menu_name_the_players(page: Page, board: int) -> None:
    """The board and its menu name the players as the event lists them; their platform ids only as tooltips."""
    card = f"[data-game='{board}']"
    shown = [["Male Youth Player 4", "youth-m-p4"], ["Male Youth Player 2", "youth-m-p2"]]
    # The names come with the sections' rosters, a moment after the board (on a busy machine, after its first paint).
    await page.wait_for_function("(card) => document.querySelectorAll(card + ' .players [data-raw=name]').length === 2",
                                 arg=card, timeout=10_000)  # fmt: skip
    assert await page.eval_on_selector_all(f"{card} .players [data-raw=name]", NAMES) == shown
    assert "youth-m-p" not in await text(page, f"{card} .players")
    await page.click(f"{card} button[data-menu]")
    assert await page.eval_on_selector_all("#ctl-menu h3 [data-raw=name]", NAMES) == shown
    assert "youth-m-p" not in await text(page, "#ctl-menu")
    await page.click("#ctl-menu button[data-control='adjust']")
    assert "youth-m-p" not in await text(page, "#ctl-title") + await text(page, "#ctl-player")
    assert await page.eval_on_selector_all("#ctl-player option", "os => os.map(o => o.title)") == [s[1] for s in shown]
    await page.click("#ctl-close")


async def open_penalty(page: Page, kind: str, penalty: str) -> None:
    await page.click(f"{OPEN.format(kind=kind)} button[data-action=penalty]")
    await page.wait_for_selector(f"{PREVIEW}[data-penalty='{penalty}']", timeout=5_000)


async def wang_warns_and_may_not_give_a_violation(page: Page, served: Served, board: int) -> None:
    await page.goto(served.base + "/arbiter")
    await log_in(page, "Wang")
    await page.wait_for_selector(f"[data-game='{board}'][data-status='live']", timeout=5_000)
    await the_board_and_its_menu_name_the_players(page, board)
    controls, left = await offered(page, board)
    assert "pause" in controls and "resume" not in controls and "resume-game" not in controls, controls
    assert "resume" in left.split()
    # Youth-m-p4 has a stream link but no camera connected: a message and leave, no prompt, no live view; youth-m-p2
    # has no link: nothing, and the menu says why.
    cameras = await camera_offered(page, board, {"youth-m-p4": "lost", "youth-m-p2": "none"})
    assert cameras["youth-m-p4"]["offered"] == ["message", "leave"] and cameras["youth-m-p4"]["live"] == 0, cameras
    assert cameras["youth-m-p4"]["left"] == "此时不适用（摄像头未连接）：耳部检查、环境检查、转动检查", cameras
    assert cameras["youth-m-p2"]["offered"] == [] and cameras["youth-m-p2"]["live"] == 0, cameras
    assert cameras["youth-m-p2"]["left"].startswith("此时不适用（未发摄像头链接）：发送消息、耳部检查"), cameras
    said = await control(page, board, "pause", "棋手网络中断")
    assert said.startswith("计时已停止：黑 ") and "· 白 " in said, said
    controls, _ = await offered(page, board)
    assert "resume" in controls and "pause" not in controls, controls
    said = await control(page, board, "resume", "网络恢复")
    assert said.startswith("计时已恢复："), said

    await open_penalty(page, "earphones", "warning")
    preview = await text(page, PREVIEW)
    assert "阶梯规则给出：Male Youth Player 2 警告（第 36.2, 15.1 条）" in preview, preview
    assert "本局第 1 次违反第 36.2 条（佩戴耳机），按本赛事规定" in preview and "本局此前无处罚" in preview
    assert "你的角色（裁判员）可以给予警告（第 16.1 条）" in preview
    await page.wait_for_function(
        "() => document.querySelector('#act-evidence img.evidence-still')?.naturalWidth > 0", timeout=5_000
    )  # the case's evidence, in the dialog
    assert await text(page, "#act-submit") == "给予警告"
    await page.fill("#act-note", "耳机清晰可见")
    await page.click("#act-submit")
    await page.wait_for_selector("#act-answer[data-status='201'][data-penalty='warning']", timeout=5_000)
    assert "已判罚：Male Youth Player 2 警告（第 36.2, 15.1 条）" in await text(page, "#act-answer")
    await page.click("#act-close")
    await page.wait_for_selector("#cases-answer.ok", timeout=5_000)
    assert "Male Youth Player 2 警告（第 36.2, 15.1 条）" in await text(page, "#cases-answer")

    # Again: a new case (the first is penalised); the ladder now gives a violation, beyond an arbiter (16.2).
    other = f"{OPEN.format(kind='extra-person')} input.reason"
    await page.fill(other, "还在核实")  # typed on another card: kept when the queue is drawn again
    await detector_incident(served, board, "earphones", "36.2", "youth-m-p2", "earphones seen again")
    await page.wait_for_selector(OPEN.format(kind="earphones"), timeout=5_000)
    assert await page.input_value(other) == "还在核实"
    await open_penalty(page, "earphones", "violation")
    assert await page.get_attribute(PREVIEW, "data-allowed") == "false"
    preview = await text(page, PREVIEW)
    assert "本局第 2 次违反第 36.2 条" in preview and "本局此前的处罚：警告（第 36.2 条）" in preview, preview
    assert "你的角色（裁判员）不能给予违规：只有裁判长或副裁判长可以（第 16.2 条）" in preview, preview
    assert await page.is_disabled("#act-submit")
    await views(page, "arbiter-penalty-refused", full_page=True)
    await page.click("#act-close")


async def li_confirms_a_loss(page: Page, served: Served, board: int) -> None:
    await page.click("#logout")
    await page.wait_for_selector("#login:not([hidden])", timeout=3_000)
    await log_in(page, "Li")
    await page.click("#lang")
    await page.wait_for_function("() => document.getElementById('cases-title').textContent === 'Cases'")
    await open_penalty(page, "extra-person", "loss")
    assert await page.get_attribute(PREVIEW, "data-loses-game") == "true"
    preview = await text(page, PREVIEW)
    assert "The ladder gives: Male Youth Player 4, the loss of the game (art. 36.4.3, 15.3)" in preview, preview
    assert "This loses the game for Male Youth Player 4 (art. 36.4.3, 15.3, 19.1.4)" in preview, preview
    assert "Your role (chief arbiter) may give the loss of the game (art. 16.3)" in preview
    assert await text(page, "#act-submit") == "Loss of the game…"
    await page.fill("#act-note", "a second person passes him notes")
    await page.click("#act-submit")  # the first click only asks
    await page.wait_for_selector("#act-submit[data-step='confirm']", timeout=3_000)
    assert "This ends the game: Male Youth Player 4 loses it" in await text(page, "#act-answer")
    assert await text(page, "#act-submit") == "Confirm: loss of the game"
    assert await result(served, "youth-m-r1-b2") is None
    await views(page, "arbiter-penalty-confirm-loss-en", full_page=True)
    await page.click("#act-submit")
    await page.wait_for_selector("#act-answer[data-status='201'][data-penalty='loss']", timeout=5_000)
    said = await text(page, "#act-answer")
    assert "Given: Male Youth Player 4, loss of the game (art. 36.4.3, 15.3)" in said, said
    assert "Game result: White wins · penalty" in said, said
    await page.click("#act-close")
    ended = await result(served, "youth-m-r1-b2")
    assert (ended["winner"], ended["reason"]) == ("white", "penalty"), ended
    await page.wait_for_selector(f"[data-game='{board}'][data-status='over']", timeout=5_000)
    controls, left = await offered(page, board)
    assert controls == [], controls  # nothing changes a finished game
    assert {"declare-result", "pause", "resume", "adjust"} <= set(left.split())
    cameras = await camera_offered(page, board, {"youth-m-p4": "lost", "youth-m-p2": "none"})
    assert cameras["youth-m-p4"]["offered"] == ["message"], cameras  # no prompt, no leave once the game is over
    left = cameras["youth-m-p4"]["left"]
    assert left == "Not offered now (the game is over): Ear check, Room scan, Pan check, Grant leave", left
    assert cameras["youth-m-p2"]["offered"] == [], cameras
    await views(page, "arbiter-penalised-en")


async def test_the_penalty_preview_and_the_confirmation_of_a_loss(served: Served) -> None:
    load_event(served)
    board = await game(served.platform, "youth-m-r1-b2", "youth-m-p4", "youth-m-p2", now_ms() - 60_000,
                       ("youth-m-p4", "youth-m-p2"))  # fmt: skip
    await send(served.platform, "move", "youth-m-r1-b2", {"point": "h8"}, now_ms() - 50_000)  # the game under way
    await detector_incident(served, board, "earphones", "36.2", "youth-m-p2", "earphones in view")
    await detector_incident(served, board, "extra-person", "36.4.3", "youth-m-p4", "a second person passes notes")
    await li(served, "/api/v1/players/youth-m-p4/stream-token", {})  # a link, never opened
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await wang_warns_and_may_not_give_a_violation(page, served, board)
            await li_confirms_a_loss(page, served, board)
            assert errors == []
        finally:
            await browser.close()


LEAVE = OPEN.format(kind="leave-request")


async def ask_to_leave(player: Page, desk: Page, reason: str) -> None:
    await player.fill("#leave-reason", reason)
    await player.click("#leave")
    await player.wait_for_selector("#request-state[data-answer='waiting']", timeout=5_000)
    await desk.wait_for_selector(LEAVE, timeout=5_000)


async def granted_on_the_case(player: Page, desk: Page) -> None:
    """Five minutes granted from the case's card: the player's page says until when, the desk the same."""
    await ask_to_leave(player, desk, "去洗手间")
    assert "申请离开比赛区域：去洗手间" in await text(desk, f"{LEAVE} .summary")  # words, not the server's
    actions = await desk.eval_on_selector_all(f"{LEAVE} button[data-action]", "bs => bs.map(b => b.dataset.action)")
    assert actions == ["grant-leave", "refuse"], actions
    await desk.fill(f"{LEAVE} input.minutes", "5")
    await desk.click(f"{LEAVE} button[data-action='grant-leave']")
    await player.wait_for_selector("#request-state[data-answer='granted']", timeout=5_000)
    granted = await text(player, "#request-state")
    assert granted.startswith("裁判准许离开，至 "), granted
    until = granted.removeprefix("裁判准许离开，至 ")[:5]
    said = await text(desk, "#cases-answer")
    assert f"已准许 Female Youth Player 2 离开 5 分钟，至 {until}" in said, said
    await desk.wait_for_selector(LEAVE, state="detached", timeout=5_000)


async def refused_on_the_case(player: Page, desk: Page) -> None:
    """Refused from the card, which first asks for the reason; the player's page shows it."""
    await ask_to_leave(player, desk, "再去一次")
    await desk.click(f"{LEAVE} button[data-action='refuse']")  # no reason: the page asks for one
    assert "请填写理由" in await text(desk, "#cases-answer")
    await desk.fill(f"{LEAVE} input.reason", "请等本局结束")
    await desk.click(f"{LEAVE} button[data-action='refuse']")
    await player.wait_for_selector("#request-state[data-answer='refused']", timeout=5_000)
    assert await text(player, "#request-state") == "裁判未准许离开：请等本局结束"
    assert "已拒绝 Female Youth Player 2 的离开申请：请等本局结束" in await text(desk, "#cases-answer")


async def test_a_leave_request_granted_and_refused_on_its_case_reaches_the_players_page(served: Served) -> None:
    load_event(served)
    link = (await li(served, "/api/v1/players/youth-f-p2/stream-token", {}))["url"]
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            player = await browser.new_page(viewport={"width": 390, "height": 844})
            desk = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            for page in (player, desk):
                page.on("pageerror", lambda error: errors.append(str(error)))
            await player.goto(served.base + link)
            await player.wait_for_selector("#channel.ok", timeout=5_000)
            await desk.goto(served.base + "/arbiter")
            await log_in(desk, "Wang")

            await granted_on_the_case(player, desk)
            await refused_on_the_case(player, desk)
            await desk.select_option("#cases-status", "closed")
            await desk.wait_for_function(
                """() => document.querySelectorAll("#cases li.case[data-kind='leave-request']").length === 2"""
            )
            statuses = await desk.eval_on_selector_all(
                "#cases li.case[data-kind='leave-request']", "items => items.map(i => i.dataset.status)"
            )
            assert sorted(statuses) == ["granted", "refused"]
            await views(desk, "arbiter-leave-answered", full_page=True)
            await player.screenshot(path=str(ARTIFACTS / "player-leave-refused.png"))
            assert errors == []
        finally:
            await browser.close()
