"""The review panel's page (``GET /review``) in a real browser: Debian's Chromium, driven by Playwright, against the
real app on 127.0.0.1 fed by signed webhooks (the set-up of tests/browser/test_dashboard.py).

A short game is played; a camera finding and an arbiter's incident are raised on it, and Li (chief, by bearer token)
gives the penalties of the ladder until the second violation loses the game (15.3). Zhao (review panel) logs in through
the page, opens the game and finds the moves, the incident, the penalty with its article and the result in the
timeline; the replay slider and a click on a timeline row show the board after that ply; the PDF export link answers a
PDF, and the audit check is ok. Screenshots at 1366x768 and
1920x1080 go to tests/browser/artifacts/review.png and review-1920x1080.png.

CI installs Chromium, so there this module never skips.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_dashboard import (
    LI_TOKEN,
    Served,
    add_arbiter,
    detector_incident,
    log_in,
    send,
    served,
    start_game,
)
from tests.browser.test_desk_languages import CJK, leftovers
from tests.proctor.conftest import iso
from tests.proctor.test_review import EVENT

__all__ = ["served"]  # the fixture, imported from the arbiters' dashboard test

REVIEWER_TOKEN = "token-zhao"
MOVES = ["h8", "h9", "i9", "i10", "j10", "g7"]


async def li(served: Served, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {LI_TOKEN}"}
    async with served.http.request(method, served.base + path, json=body, headers=headers) as response:
        return response.status, await response.json()


async def play_the_game(served: Served) -> int:
    """r1: six stones, a feed gap (White's connection dropped for 3 s), a camera gap (lost for 6 s), an arbiter's
    incident of 36.4.2 and three penalties of its ladder: warning, violation, violation, the loss (15.3). r2: another
    game for the list."""
    platform = served.platform
    start = now_ms() - 120_000
    game = await start_game(platform, "r1", start, "rapid-15", "freestyle")
    await start_game(platform, "r2", start, "rapid-15", "freestyle")
    await send(platform, "move", "r2", {"point": "h8"}, start + 3_000)
    for ply, point in enumerate(MOVES):
        at = start + 5_000 + 6_000 * ply
        body = await send(platform, "move", "r1", {"point": point}, at)
        assert body["status"] == "applied", body
        if ply == 2:
            await send(platform, "player.disconnected", "r1", {"player": "r1-w"}, at + 1_000)
            await send(platform, "player.reconnected", "r1", {"player": "r1-w"}, at + 4_000)
    lost = await detector_incident(served, game, "camera-lost", "36.4", "r1-b", "no picture")
    ended = {"action": "note", "note": "ended after 6 s"}  # the detector's note: the camera is back
    status, _ = await li(served, "POST", f"/api/v1/incidents/{lost}/actions", ended)
    assert status == 201
    status, raised = await li(served, "POST", "/api/v1/incidents", {
        "game": game, "kind": "extra-person", "article": "36.4.2", "player": "r1-w",
        "summary": "a second person <b>behind</b> r1-w on the room camera",
    })  # fmt: skip
    assert status == 201
    for expected in ("warning", "violation", "violation"):
        status, answer = await li(served, "POST", f"/api/v1/incidents/{raised['id']}/actions", {
            "action": "penalty", "offence": "36.4.2", "note": "seen again on the room camera",
        })  # fmt: skip
        assert (status, answer["verdict"]["penalty"]) == (201, expected), answer
    return game


async def open_the_game(page: Page, served: Served, game: int) -> None:
    """Zhao logs in through the page (Chinese by default) and opens the game from the list."""
    await page.goto(served.base + "/review")
    assert await page.get_attribute("html", "lang") == "zh-CN"
    assert await page.text_content("#login-submit") == "登录"
    await log_in(page, "Zhao")
    assert "审查组" in (await page.text_content("#who") or "")
    assert await page.text_content("#time-zone") == "时区：UTC (UTC+00:00)"  # no event loaded: UTC, named
    await page.wait_for_selector(f"#games button[data-game='{game}']", timeout=5_000)
    assert await page.locator("#games button[data-game]").count() == 2
    await page.click(f"#games button[data-game='{game}']")
    await page.wait_for_selector(f"#review[data-game='{game}'] #timeline tbody tr", timeout=5_000)


async def check_the_timeline(page: Page) -> None:
    """The moves with both clocks, the incidents, the penalties with their articles, the verdict and the result;
    the feed's and the camera's gaps on separate tracks; server text shown as text."""
    rows = "#timeline tbody tr"
    assert await page.locator(f"{rows}[data-type=move]").count() == len(MOVES)
    third = await page.text_content(f"{rows}[data-ply='3']") or ""
    assert "第 3 手" in third and "i9" in third and "黑 14:49" in third and "白 14:54" in third, third
    incident = await page.text_content(f"{rows}[data-type=incident]:has-text('36.4.2')") or ""
    assert "区域内有他人" in incident and "<b>behind</b>" in incident, incident  # escaped, not markup
    assert await page.locator("#timeline b").count() == 0
    # The server's words in the page's language (proctor.server_words): a log line with its player, a camera finding.
    gone = await page.text_content(f"{rows}[data-kind=disconnected] td.detail") or ""
    assert gone.startswith("白方（") and gone.endswith("与平台断开连接，计时继续"), gone
    found = await page.locator(f"{rows}[data-type=incident]").all_text_contents()
    assert any("摄像头无画面" in text for text in found) and not any("no picture" in text for text in found), found
    penalties = await page.locator(f"{rows}[data-type=penalty]").all_text_contents()
    assert len(penalties) == 3 and all("36.4.2" in text and "Li (裁判长)" in text for text in penalties), penalties
    assert "36.4.2, 15.2" in penalties[-1]
    verdict = await page.text_content(f"{rows}[data-type=verdict]") or ""
    assert "15.3, 18.14" in verdict and "裁决" in verdict and "two violations" not in verdict, verdict
    # The engine's English words stay as the line's tooltip, marked as English.
    said = await page.get_attribute(f"{rows}[data-type=verdict] td.detail", "title") or ""
    assert "two violations" in said and await page.get_attribute(f"{rows}[data-type=verdict] td.detail", "lang") == "en"
    actions = await page.locator(f"{rows}[data-type=incident-action][data-action=penalty]").all_text_contents()
    assert "违规" in actions[-1] and "黑胜" in actions[-1], actions
    assert "本局第 3 次违反第 36.4.2 条：违规" in actions[-1], actions  # the ladder's reason in the page's words
    result = await page.text_content("#result") or ""
    assert "黑胜" in result and "判罚" in result and "15.3, 18.14" in result and "未确认" in result, result
    assert await page.get_attribute("#result", "data-winner") == "black"
    track = ".track[data-track={}][data-player='{}']"
    tracks = {(kind, player): await page.get_attribute(track.format(kind, player), "data-gaps")
              for kind in ("feed", "camera") for player in ("r1-b", "r1-w")}  # fmt: skip
    assert tracks == {("feed", "r1-b"): "0", ("feed", "r1-w"): "1", ("camera", "r1-b"): "1", ("camera", "r1-w"): "0"}


async def check_the_replay(page: Page) -> None:
    """The slider shows the board after ply n; a click on a timeline row moves it to that row's time."""
    stones = "() => Number(document.getElementById('board').dataset.stones)"
    assert await page.evaluate(stones) == len(MOVES)
    await page.fill("#ply", "2")
    assert await page.evaluate(stones) == 2
    assert "第 2 / 6 手" in (await page.text_content("#ply-label") or "")
    await page.click("#timeline tbody tr[data-ply='4']")
    assert (await page.input_value("#ply"), await page.evaluate(stones)) == ("4", 4)
    assert await page.get_attribute("#board", "data-last-move") == "i10"
    await page.click("#timeline tbody tr[data-kind=start]")  # before the first move: an empty board
    assert (await page.input_value("#ply"), await page.evaluate(stones)) == ("0", 0)
    await page.click("#timeline tbody tr[data-type=verdict]")
    assert (await page.input_value("#ply"), await page.evaluate(stones)) == ("6", 6)


async def check_the_exports(page: Page, served: Served, game: int) -> None:
    """The game's PDF report and RIF record answer through the page's session; the audit chain is ok."""
    pdf = await page.get_attribute("#export-pdf", "href")
    assert pdf == f"/api/v1/reports/incidents.pdf?game={game}"
    response = await page.request.get(served.base + pdf)
    assert response.status == 200 and response.headers["content-type"] == "application/pdf"
    assert (await response.body()).startswith(b"%PDF")
    rif = await page.request.get(served.base + (await page.get_attribute("#export-rif", "href") or ""))
    assert rif.status == 200 and b"h8" in await rif.body()
    await page.wait_for_selector("#audit[data-ok=true]", timeout=5_000)
    assert "审计链：正常" in (await page.text_content("#audit") or "")


async def check_the_searches(page: Page) -> None:
    """The player's history from the game's header; the incident search with its filters and report links."""
    await page.click("#game-players button[data-player='r1-w']")
    await page.wait_for_selector("#history .card[data-player='r1-w']", timeout=5_000)
    history = await page.text_content("#history") or ""
    assert "White" in history and "36.4.2, 15.2" in history and "15.3, 18.14" in history
    await page.click("#tabs button[data-view=incidents]")
    await page.fill("#f-article", "36.4")
    await page.select_option("#f-status", "penalty")
    await page.click("#incident-filters button[type=submit]")
    await page.wait_for_selector("#incident-results tbody tr[data-incident='2']", timeout=5_000)
    assert await page.locator("#incident-results tbody tr").count() == 1
    report = "/api/v1/reports/incidents.html?article=36.4&status=penalty"
    assert await page.get_attribute("#report-html", "href") == report
    await page.click("#lang")
    assert await page.get_attribute("html", "lang") == "en"
    # The report in the page's language.
    assert await page.get_attribute("#report-html", "href") == report + "&lang=en"
    english = await page.request.get(page.url.rsplit("/review", 1)[0] + report + "&lang=en")
    assert english.status == 200 and '<html lang="en">' in await english.text()
    assert (await page.text_content("#audit") or "").startswith("Audit: ok (")
    assert await page.text_content("#time-zone") == "Times: UTC (UTC+00:00)"
    chinese = await leftovers(page, CJK)  # nothing left in Chinese but user data and the language switch
    assert not chinese, chinese
    assert await page.text_content("#incident-results tbody tr[data-incident='2'] td:nth-child(3)") == "another person"
    await page.click("#lang")


async def test_the_review_page_in_a_real_browser(served: Served) -> None:
    add_arbiter(served.context.settings, "Zhao", "reviewer", REVIEWER_TOKEN)
    game = await play_the_game(served)
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await open_the_game(page, served, game)
            await check_the_timeline(page)
            await check_the_replay(page)
            await check_the_exports(page, served, game)
            await page.click("#timeline tbody tr[data-type=incident][data-incident='2']")
            await views(page, "review")
            await check_the_searches(page)
            assert errors == []
        finally:
            await browser.close()


async def appeal_message(page: Page, status: str) -> str:
    await page.wait_for_selector(f"#appeal-message[data-status='{status}']", timeout=5_000)
    return await page.text_content("#appeal-message") or ""


async def reviewer_is_refused_a_vote(browser: Browser, served: Served, appeal: int, errors: list[str]) -> None:
    """Zhao (review panel) sees the appeal; his vote is refused by the server, and the page shows its message."""
    reviewer = await (await browser.new_context(viewport={"width": 1366, "height": 768})).new_page()
    reviewer.on("pageerror", lambda error: errors.append(str(error)))
    await reviewer.goto(served.base + "/review")
    await log_in(reviewer, "Zhao")
    await reviewer.click("#tabs button[data-view=appeals]")
    await reviewer.click(f"#appeal-list tr[data-appeal='{appeal}'] button")
    await reviewer.wait_for_selector(f"#appeal-detail[data-appeal='{appeal}']", timeout=5_000)
    await reviewer.click("#vote-submit")
    refused = await appeal_message(reviewer, "403")
    assert "403" in refused and "the review panel reads only" in refused


@pytest.mark.asyncio
async def test_appeals_are_filed_voted_and_decided_through_the_page(served: Served) -> None:
    """Chen (of the appeals committee, with Wu and Sun: 22.2 wants an odd number, at least 3) files an appeal, votes
    and, once Wu has voted too, decides it on the Appeals tab; Zhao's (reviewer) vote is refused by the server (22.2)
    and the page shows its message."""
    add_arbiter(served.context.settings, "Chen", "appeals-committee", "token-chen")
    add_arbiter(served.context.settings, "Wu", "appeals-committee", "token-wu")
    add_arbiter(served.context.settings, "Sun", "appeals-committee", "token-sun")
    add_arbiter(served.context.settings, "Zhao", "reviewer", REVIEWER_TOKEN)
    game = await start_game(served.platform, "a1", now_ms() - 60_000, "rapid-15", "freestyle")
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/review")
            await log_in(page, "Chen")
            await page.click("#tabs button[data-view=appeals]")
            await page.fill("#ap-game", str(game))
            await page.fill("#ap-name", "<b>Team leader</b>")
            await page.select_option("#ap-capacity", "team-leader")
            await page.fill("#ap-team", "Hangzhou")
            await page.fill("#ap-grounds", "the clock was not <i>stopped</i> during the claim")
            await page.fill("#ap-amount", "500")
            await page.click("#ap-submit")
            assert "#" in await appeal_message(page, "201")
            await page.wait_for_selector("#appeal-list tbody tr[data-appeal]", timeout=5_000)
            appeal = int(await page.get_attribute("#appeal-list tbody tr[data-appeal]", "data-appeal") or 0)
            await page.click(f"#appeal-list tr[data-appeal='{appeal}'] button")
            await page.wait_for_selector(f"#appeal-detail[data-appeal='{appeal}']", timeout=5_000)
            assert await page.text_content("#appeal-grounds") == "the clock was not <i>stopped</i> during the claim"
            assert "<b>Team leader</b>" in (await page.text_content("#appeal-facts") or "")
            await page.select_option("#vote-choice", "uphold")
            await page.fill("#vote-note", "the claim stands")
            await page.click("#vote-submit")
            await appeal_message(page, "201")
            await page.wait_for_function("() => document.querySelectorAll('#appeal-votes li:not(.muted)').length === 1")
            assert "Chen" in (await page.text_content("#appeal-votes") or "")
            async with served.http.post(f"{served.base}/api/v1/appeals/{appeal}/votes", json={"vote": "uphold"},
                                        headers={"Authorization": "Bearer token-wu"}) as response:  # fmt: skip
                assert response.status == 201  # a majority of the three
            await page.click("#decide-submit")
            await appeal_message(page, "201")
            await page.wait_for_selector("#appeal-detail[data-status='upheld']", timeout=5_000)
            # Roles and the deposit's fate in the page's words (Chinese by default), not the server's ids.
            assert "Chen (申诉（仲裁）委员会)" in (await page.text_content("#appeal-facts") or "")
            decision = await page.text_content("#appeal-decision") or ""
            assert "押金 退还 500 CNY" in decision and "appeals-committee" not in decision, decision
            await page.click("#decide-submit")  # the decision is final (22.2)
            assert "409" in await appeal_message(page, "409")

            await reviewer_is_refused_a_vote(browser, served, appeal, errors)
            assert not errors, errors
        finally:
            await browser.close()


async def load_review_cup(served: Served, tmp_path: Path) -> None:
    """The review-cup event with a name to escape; round 1's board 1 played on the platform: Player Three resigns."""
    path = tmp_path / "review-cup.toml"
    path.write_text(EVENT.replace('"Player Four"', '"<b>Player Four</b>"'), encoding="utf-8")
    engine = create_database_engine(served.context.settings)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    start = now_ms() - 60_000
    data = {"black": {"id": "rc-1"}, "white": {"id": "rc-3"}, "rule": "renju", "time_control": "rapid-15",
            "start_at": iso(start)}  # fmt: skip
    await send(served.platform, "game.created", "rc-r1-b1", data, start - 60_000)
    for player in ("rc-1", "rc-3"):
        await send(served.platform, "player.joined", "rc-r1-b1", {"player": player}, start - 30_000)
    await send(served.platform, "move", "rc-r1-b1", {"point": "h8"}, start + 5_000)
    assert (await send(served.platform, "resign", "rc-r1-b1", {"player": "rc-3"}, start + 9_000))["status"] == "applied"


async def record_a_withdrawal(page: Page) -> None:
    """The table after round 2; then Li records Player Four's withdrawal after round 1 (24.4) with its written
    reasons (24.1.2): the list says so and the player is no longer offered."""
    await page.wait_for_selector("#standings-table[data-round='2']", timeout=5_000)
    rows = await page.eval_on_selector_all(
        "#standings-table tbody tr",
        "rows => rows.map(r => [r.querySelector('.place').textContent, r.dataset.startNo, "
        "r.querySelector('.points').textContent])",
    )
    assert rows == [["1", "3", "2"], ["2", "2", "1.5"], ["3", "1", "0.5"], ["4", "4", "0"]]
    form = "#withdrawal-form"
    assert await page.is_visible(form)
    await page.select_option(f"{form} select[name=start_no]", "4")
    await page.fill(f"{form} input[name=after_round]", "1")
    await page.fill(f"{form} input[name=reason]", "ill: a doctor's note, with the organising committee's consent")
    await page.click(f"{form} button[type=submit]")
    await page.wait_for_selector(f"{form} .entry-message[data-status='201']", timeout=5_000)
    listed = await page.text_content("#withdrawal-list li") or ""
    assert "<b>Player Four</b>" in listed and "第 1 轮后退赛（第24.4条）" in listed, listed
    offered = await page.eval_on_selector_all(f"{form} select[name=start_no] option", "o => o.map(x => x.value)")
    assert "4" not in offered


@pytest.mark.asyncio
async def test_the_standings_tab_and_a_chief_entering_results(served: Served, tmp_path: Path) -> None:
    """The review-cup event (tests/proctor/test_review.py), with a name to escape, is loaded; round 1's board 1 is
    played on the platform (Player Three resigns), board 2 has no result yet. Li (chief) opens the Standings tab: the
    table is after round 0 (everyone on 0), names shown as text, the tie-breaks as columns, CSV and TRF links for the
    section. He enters board 2's result; on board 1 a result against the service's verdict is refused (409, shown),
    then taken with his override (16), and the table follows at once (28). He records a withdrawal (24.4)."""
    await load_review_cup(served, tmp_path)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/review")
            await log_in(page, "Li")
            assert await page.text_content("#time-zone") == "时区：Asia/Shanghai (UTC+08:00)"  # the event's zone
            await page.click("#tabs button[data-view=standings]")
            await page.wait_for_selector("#standings-table tbody tr[data-start-no]", timeout=5_000)
            assert await page.input_value("#st-section") == "review-cup/open"
            assert (
                await page.get_attribute("#st-csv", "href") == "/api/v1/events/review-cup/sections/open/standings.csv"
            )
            points = await page.eval_on_selector_all(
                "#standings-table tbody td.points", "cells => cells.map(c => c.textContent)"
            )
            assert points == ["0", "0", "0", "0"]
            names = await page.eval_on_selector_all(
                "#standings-table td.name", "cells => cells.map(c => c.textContent)"
            )
            assert "<b>Player Four</b>" in names  # shown as text, never as HTML
            assert await page.query_selector("#standings-table td.name b") is None
            headers = await page.eval_on_selector_all("#standings-table th", "cells => cells.map(c => c.textContent)")
            assert headers[-2:] == ["BH", "WIN"]

            board1, board2 = "#st-pairings tr[data-board='1']", "#st-pairings tr[data-board='2']"
            assert await page.text_content(f"{board1} td.result") == "1-0"
            await page.select_option(f"{board2} select[name=result]", "0-1")
            await page.fill(f"{board2} input[name=reason]", "the scoresheet, signed by both players")
            await page.click(f"{board2} button[type=submit]")
            await page.wait_for_selector(f"{board2} .entry-message[data-status='201']", timeout=5_000)
            await page.wait_for_selector("#standings-table[data-round='2']", timeout=5_000)
            starts = "rows => rows.map(r => r.dataset.startNo)"
            assert await page.eval_on_selector_all("#standings-table tbody tr", starts) == ["1", "2", "3", "4"]
            await page.select_option("#st-round", "1")  # the pairings and the table of round 1
            await page.wait_for_selector("#standings-table[data-round='1']", timeout=5_000)
            await page.select_option(f"{board1} select[name=result]", "0-1")
            await page.fill(f"{board1} input[name=reason]", "<i>the video shows White won on time</i>")
            await page.click(f"{board1} button[type=submit]")
            await page.wait_for_selector(f"{board1} .entry-message[data-status='409']", timeout=5_000)
            assert "409" in (await page.text_content(f"{board1} .entry-message") or "")
            await page.check(f"{board1} input[name=override]")
            await page.click(f"{board1} button[type=submit]")
            await page.wait_for_selector(f"{board1} .entry-message[data-status='201']", timeout=5_000)
            assert await page.eval_on_selector_all("#standings-table tbody tr", starts) == ["2", "3", "1", "4"]
            await page.select_option("#st-round", "")  # the last complete round again
            await record_a_withdrawal(page)
            assert not errors, errors
        finally:
            await browser.close()
