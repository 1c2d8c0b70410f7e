"""The desk's case queue (issue 13) in a real browser: Debian's Chromium, driven by Playwright, against the real app
fed by signed webhooks and the camera checks' incidents.

Li (chief) logs in to the Chinese desk: a pending no-show verdict (``confirm_time_verdicts``) is the first case, with
its article and its facts in words; sixteen "another person" findings of one player are one case with sixteen
occurrences, their lines and the best evidence on demand. In English the same; the kind filter; the verdict confirmed
from the queue (the game is over, Black wins); the other case dismissed with a reason by the bulk action. Screenshots
at 1366x768 (the desk's also at 1920x1080) go to tests/browser/artifacts/.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from playwright.async_api import Page, async_playwright

from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.browser.test_dashboard import EVENT_EXAMPLE, LI_TOKEN, Served, add_arbiter, log_in, serve
from tests.proctor.conftest import Platformer, iso, register_platform
from tests.video.frames import scene


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The real app on a free port, the example event loaded, Li (chief); deadlines ruled at once (no grace)."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"), models_dir=str(tmp_path / "models"),
                        deadline_grace_ms=0)  # fmt: skip
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EVENT_EXAMPLE, now=0)
    engine.dispose()
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    async with serve(settings, secret) as served:
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
    await views(page, "arbiter-cases-en")


async def acted_on_from_the_queue(page: Page, served: Served) -> None:
    """The verdict confirmed (the game over, Black wins by no-show); the other case dismissed by the bulk action."""
    await page.fill(f"{VERDICT} input.reason", "absent, no message from the player")
    await page.click(f"{VERDICT} button[data-action=confirm]")
    await page.wait_for_selector(VERDICT, state="detached", timeout=5_000)  # the open cases only
    li = {"Authorization": f"Bearer {LI_TOKEN}"}
    url = f"{served.base}/api/v1/platforms/web/games/youth-m-r1-b1"
    state = await (await served.http.get(url, headers=li)).json()
    assert state["result"]["winner"] == "black" and state["result"]["reason"] == "no-show"
    await page.check(f"{GROUPED} input.pick")
    await page.fill("#bulk-reason", "the coach behind him, allowed by the organiser")
    await page.click("#bulk-dismiss")
    await page.wait_for_selector("#cases li.case", state="detached", timeout=5_000)
    assert await page.is_visible("#cases-empty")
    await page.select_option("#cases-status", "closed")
    await page.wait_for_function(COUNT.format(n=2))
    statuses = await page.eval_on_selector_all("#cases li.case", "items => items.map(i => i.dataset.status)")
    assert sorted(statuses) == ["confirmed", "dismissed"]


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
            await the_english_queue(page)
            await acted_on_from_the_queue(page, served)
            assert errors == []
        finally:
            await browser.close()
