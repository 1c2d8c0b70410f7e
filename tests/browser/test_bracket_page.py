"""The knockout on the review page (27.1, 28.4; regulations 2023 VII(3), VII(4)3) in a real browser: Debian's
Chromium, driven by Playwright, against the real app (the set-up of tests/browser/test_dashboard.py).

The stage cup (tests/proctor/test_knockout_stage.py) is loaded with its preliminaries played: places 4-5 are level
after every tie-break across the cut to the finals. Li (chief) opens the Standings tab: the preliminaries name the
play-off the tie needs; the finals are not drawn yet, and the page offers him the draw. He draws it with the seeds
after the play-off; the bracket shows both semi-finals with their players and each one's next game, in Chinese and
then in English. The 2021 example's youth team event (VIII(6)2) is one of the tab's choices, with its table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright

from proctor.database import create_database_engine
from proctor.events import load_event_file
from tests.browser.chromium import launch
from tests.browser.test_dashboard import Served, load_example_event, log_in, served
from tests.proctor.test_knockout_stage import event_file

__all__ = ["served"]  # the fixture, imported from the arbiters' dashboard test


async def check_the_team_table(page: Page) -> None:
    """The youth team event of the 2021 example: a unit's best male and best female player (VIII(6)2)."""
    await page.select_option("#st-section", "team:national-youth-2021/youth-team")
    await page.wait_for_selector("#standings-table tbody tr[data-unit]", timeout=5_000)
    assert await page.is_hidden("#st-bracket") and await page.is_hidden("#st-trf")
    caption = await page.text_content("#st-caption") or ""
    assert caption.startswith("Youth Team (2021 regulations VIII(6)2"), caption
    headers = await page.eval_on_selector_all("#standings-table th", "cells => cells.map(c => c.textContent)")
    assert headers == ["Place", "Unit", "Points", "Sum of places", "Male player", "Female player"], headers
    first = await page.text_content("#standings-table tbody tr[data-unit] td:nth-child(5)") or ""
    assert "(place " in first and "pts)" in first, first
    assert "format=csv" in (await page.get_attribute("#st-csv", "href") or "")


@pytest.mark.asyncio
async def test_the_chief_draws_the_knockout_from_the_review_page(served: Served, tmp_path: Path) -> None:
    load_example_event(served.context.settings)  # its team events (2021 regulations VIII(6)2)
    path = tmp_path / "stage-cup.toml"
    path.write_text(event_file(played=True), encoding="utf-8")
    engine = create_database_engine(served.context.settings)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/review")
            await log_in(page, "Li")
            await page.click("#tabs button[data-view=standings]")
            await page.wait_for_selector("#standings-table tbody tr[data-start-no]", timeout=5_000)
            await page.select_option("#st-section", "stage-cup/prelims")
            await page.wait_for_selector("#st-play-offs li", timeout=5_000)
            tie = await page.text_content("#st-play-offs li") or ""
            assert "第 4–5 名" in tie and "乙、丁" in tie and "2023 年规程第七条（四）3" in tie, tie
            await page.select_option("#st-section", "stage-cup/finals")
            await page.wait_for_selector("#st-bracket:not([hidden]) #bracket-draw:not([hidden])", timeout=5_000)
            assert "尚未抽签" in (await page.text_content("#bracket-matches") or "")
            await page.fill("#bracket-draw input[name=reason]", "丁 won the play-off for place 4")
            await page.fill("#bracket-draw input[name=seeds]", "1, 3, 5, 4")
            await page.click("#bracket-draw button[type=submit]")
            await page.wait_for_selector("#bracket-matches li[data-round='1'][data-board='2']", timeout=5_000)
            assert await page.is_hidden("#bracket-draw")
            semi = await page.text_content("#bracket-matches li[data-round='1'][data-board='2']") or ""
            assert "丙 – 戊" in semi and "下一局：第 1 局，丙（黑）对 戊" in semi, semi
            final = await page.text_content("#bracket-matches li[data-round='2']") or ""
            assert "决赛" in final and "等待上一轮胜者" in final, final
            await page.click("#lang")
            await page.wait_for_function("document.documentElement.lang === 'en'")
            semi = await page.text_content("#bracket-matches li[data-round='1'][data-board='1']") or ""
            assert "Next: game 1, 甲 (Black) v 丁" in semi, semi
            assert "Knockout bracket (article 27.1)" in (await page.text_content("#st-bracket h3") or "")
            await check_the_team_table(page)
            assert not errors, errors
        finally:
            await browser.close()
