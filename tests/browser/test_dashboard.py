"""The arbiters' dashboard (``GET /arbiter``) in a real browser: Debian's Chromium, driven by Playwright, against the
real app on 127.0.0.1 fed by signed webhooks.

Wang (arbiter) logs in through the form, sees a move on the board within 2 s of its webhook and a finding arrive in
the case queue live, gives a warning from its case, and is refused what article 16 keeps from him (the penalty
dialog's preview says why and offers no submit; the server refuses a forged request from his page). From a board's
menu he pauses and resumes the clocks, is refused the declaration of a result (16.3), watches a player's camera come
up (indicator and thumbnail, from a real aiortc peer), messages the player, and sees the camera lost when it goes. Li
(chief) then gives the second violation, which loses the game (15.3: confirmed by a second click), and the board
shows the result. Screenshots at 1366x768 (each view also at
1920x1080) go to tests/browser/artifacts/.

CI installs Chromium, so there this module never skips.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import pytest
from aiohttp import ClientResponse, ClientSession, web
from playwright.async_api import Page, async_playwright
from sqlalchemy import insert

from engine.board import COLUMNS
from proctor.accounts import set_password, token_hash
from proctor.app import create_app
from proctor.context import CONTEXT, Context
from proctor.database import create_database_engine
from proctor.events import load_event_file, parse_event, store_event
from proctor.models import Arbiter
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.browser.chromium import launch
from tests.browser.screenshots import ARTIFACTS, views
from tests.proctor.conftest import Platformer, iso, register_platform
from tests.proctor.test_camera import ScriptedCamera, connect
from tests.video.frames import scene

EVENT_EXAMPLE = Path(__file__).parents[2] / "examples" / "national-youth-2021.toml"
PASSWORD = "correct horse battery"
LI_TOKEN, WANG_TOKEN = "token-li", "token-wang"
CHIMES = "() => Number(document.body.dataset.chimes || 0)"
BOARD_WITHIN_S = 2.0
"""How long a move may take from its webhook to the board drawn in the page."""


@dataclass
class Served:
    base: str
    context: Context
    platform: Platformer
    http: ClientSession


class _Client:
    """What :class:`Platformer` needs of a test client, over a real socket."""

    def __init__(self, http: ClientSession, base: str) -> None:
        self.http, self.base = http, base

    async def post(self, path: str, **kwargs: Any) -> ClientResponse:
        return await self.http.post(self.base + path, **kwargs)


@asynccontextmanager
async def serve(settings: Settings, secret: str) -> AsyncIterator[Served]:
    """The real app of ``settings`` on a free port of 127.0.0.1, with a client session and the platform ``web``."""
    app = create_app(settings)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    try:
        async with ClientSession() as http:
            platform = Platformer(cast(Any, _Client(http, base)), "web", secret)
            yield Served(base, app[CONTEXT], platform, http)
    finally:
        await runner.cleanup()


def add_arbiter(settings: Settings, name: str, role: str, token: str) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(token)))
        set_password(connection, name, PASSWORD)
    engine.dispose()


def load_example_event(settings: Settings) -> None:
    """The example event (examples/national-youth-2021.toml, its zone Asia/Shanghai) into the database."""
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EVENT_EXAMPLE, now=0)
    engine.dispose()


@asynccontextmanager
async def serve_example_event(tmp_path: Path, deadline_grace_ms: int) -> AsyncIterator[Served]:
    """The real app on a free port, a fresh SQLite file, the platform ``web``, the example event and Li (chief)."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"), models_dir=str(tmp_path / "models"),
                        deadline_grace_ms=deadline_grace_ms)  # fmt: skip
    load_example_event(settings)
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    async with serve(settings, secret) as served:
        yield served


def event_settings(tmp_path: Path, event: str, models_dir: Path | None = None) -> tuple[Settings, str]:
    """A fresh SQLite file with the platform ``web``, the event file's text ``event`` and Li (chief); the settings
    (models from ``models_dir``, none by default; a long grace, so that no deadline rules while a test sets up) and the
    platform's secret, for :func:`serve`."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"),
                        models_dir=str(models_dir or tmp_path / "models"), deadline_grace_ms=600_000)  # fmt: skip
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        store_event(connection, parse_event(event, tmp_path), now=0)
    engine.dispose()
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    return settings, secret


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The real app on a free port of 127.0.0.1, a fresh SQLite file, the platform ``web`` and two arbiters."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    # The round is replayed from a minute or two ago: the grace keeps the deadline timer from ruling a no-show
    # between a game's creation and its players' arrival, which reach the server a few milliseconds apart.
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"), models_dir=str(tmp_path / "models"),
                        feed_gap_timeout_s=2.0, deadline_grace_ms=600_000)  # fmt: skip
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    add_arbiter(settings, "Wang", "arbiter", WANG_TOKEN)
    async with serve(settings, secret) as served:
        yield served


async def send(platform: Platformer, kind: str, game: str, data: dict[str, Any], at: int, **kw: Any) -> dict[str, Any]:
    status, body = await platform.send(kind, game, data, at=at, **kw)
    assert status in (200, 202), (status, body)
    return body


async def start_game(platform: Platformer, name: str, start: int, time_control: str, rule: str) -> int:
    _, created = await platform.create(name, start=start, time_control=time_control, rule=rule)
    for side in "bw":
        await send(platform, "player.joined", name, {"player": f"{name}-{side}"}, start - 30_000)
    return int(created["game"])


async def set_up_round(served: Served) -> dict[str, Any]:
    """Twelve games of a round: g1 (renju, the one the test acts on), ten freestyle games with scattered stones, one
    blitz game short of time; a clock mismatch, a feed gap and a camera finding on three of them."""
    platform = served.platform
    now = now_ms()
    start = now - 60_000
    games = {"g1": await start_game(platform, "g1", start, "rapid-15", "renju")}
    for i, point in enumerate(["h8", "h9", "i9"]):
        body = await send(platform, "move", "g1", {"point": point}, start + 5_000 + 5_000 * i)
        assert body["status"] == "applied", body
    region = [f"{c}{r}" for c in COLUMNS[3:12] for r in range(4, 13)]
    for index in range(2, 12):
        name = f"g{index}"
        games[name] = await start_game(platform, name, start, "rapid-15", "freestyle")
        points = random.Random(index).sample(region, 4 + (3 * index) % 17)
        for ply, point in enumerate(points):
            body = await send(platform, "move", name, {"point": point}, start + 2_000 + 2_500 * ply)
            assert body["status"] == "applied", (name, ply, body)
    # Blitz: White is on move with 65 s left (3 min + 2 s, 47 s used for a move, thinking for 70 s now).
    blitz = now - 124_000
    games["g12"] = await start_game(platform, "g12", blitz, "blitz-3+2", "freestyle")
    for point, at in [("h8", blitz + 5_000), ("i9", blitz + 52_000), ("j10", blitz + 54_000)]:
        await send(platform, "move", "g12", {"point": point}, at)
    # The platform's clock disagrees with the service's (a rule's incident), and a gap in another game's feed.
    await send(platform, "move", "g2", {"point": "a1", "clock_ms": 1_000}, now - 1_000)
    await send(platform, "move", "g3", {"point": "o15"}, now - 500, seq=platform.seqs["g3"] + 2)
    await detector_incident(served, games["g4"], "left-area", "36.4.1", "g4-b", "nobody in front of the camera")
    return games


async def detector_incident(served: Served, game: int, kind: str, article: str, player: str, detail: str) -> int:
    """An incident as the camera checks raise it, with its snapshot (a real JPEG in the media folder) and its SHA-256
    as evidence."""
    context = served.context
    name = f"{now_ms()}-{kind}-{player}.jpg"
    snapshot = bytes(cv2.imencode(".jpg", scene(1, np.random.default_rng(3)))[1])
    folder = Path(context.settings.media_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(snapshot)
    evidence = {"started": now_ms() - 4_000, "detail": detail, "media": [name],
                "sha256": hashlib.sha256(snapshot).hexdigest()}  # fmt: skip
    summary = f"{player}: {detail}"
    incident: int = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, kind, summary, source="detector:camera", article=article, evidence=evidence,
            player_ref=player, at=now_ms(), confidence=0.93,
        )
    )  # fmt: skip
    return incident


async def log_in(page: Page, name: str) -> None:
    await page.fill("#login-name", name)
    await page.fill("#login-password", PASSWORD)
    await page.click("#login-submit")
    await page.wait_for_selector(f"#who[data-name={name!r}]", timeout=5_000)


OPEN_CASE = "#cases li.case[data-kind='{kind}'][data-status='open']"


async def penalty_through_page(page: Page, kind: str, offence: str, note: str) -> dict[str, Any]:
    """Open the open case's penalty dialog, wait for the server's preview, give the reason, submit (twice for a loss
    of the game); the preview and the server's answer as the page shows them (no answer when it offers no submit)."""
    await page.click(f"{OPEN_CASE.format(kind=kind)} button[data-action=penalty]")
    assert await page.input_value("#act-offence") == offence  # the case's article is offered first
    await page.wait_for_selector("#act-preview[data-penalty]", timeout=5_000)
    preview = await page.evaluate(
        "() => { const p = document.getElementById('act-preview');"
        " return {penalty: p.dataset.penalty, allowed: p.dataset.allowed, text: p.textContent}; }"
    )
    answer: dict[str, Any] = {"status": None, "penalty": None, "text": "", "preview": preview}
    if await page.is_enabled("#act-submit"):
        await page.fill("#act-note", note)
        await page.click("#act-submit")
        if await page.get_attribute("#act-submit", "data-step") == "confirm":
            await page.click("#act-submit")  # a loss of the game: the second click gives it
        await page.wait_for_function("() => document.getElementById('act-answer').dataset.status > '0'", timeout=5_000)
        answer |= await page.evaluate(
            "() => { const a = document.getElementById('act-answer');"
            " return {status: a.dataset.status, penalty: a.dataset.penalty || null, text: a.textContent}; }"
        )
    await page.click("#act-close")
    return answer


async def wait_for_case(page: Page, kind: str, since: float) -> float:
    await page.wait_for_selector(OPEN_CASE.format(kind=kind), timeout=5_000)
    return time.perf_counter() - since


ORDERS = "() => [...document.querySelectorAll('#boards .board')].map(b => [b.dataset.open, Number(b.style.order)])"
FORGED_LOSS = """async ([game]) => {
    const session = await (await fetch('/api/v1/session')).json();
    const post = (headers) => fetch(`/api/v1/games/${game}/actions`, {
        method: 'POST', headers: {'Content-Type': 'application/json', ...headers},
        body: JSON.stringify({action: 'penalty', player: 'g1-w', offence: '18.12', role: 'chief', reason: 'forged'})});
    const withToken = await post({'X-CSRF-Token': session.csrf});
    const withoutToken = await post({});
    return {status: withToken.status, body: await withToken.json(), bare: withoutToken.status};
}"""
"""Wang's page asks the server for a loss (18.12) with his own CSRF token, then without one."""


async def wang_watches_and_warns(page: Page, served: Served, g1: int, figures: dict[str, float]) -> int:
    """Login in Chinese; a move on the board within 2 s; a camera finding live in the queue; Wang's warning."""
    card = f"[data-game='{g1}']"
    await page.goto(served.base + "/arbiter")
    assert await page.get_attribute("html", "lang") == "zh-CN"
    assert await page.text_content("#login-submit") == "登录"
    await log_in(page, "Wang")
    assert "裁判员" in (await page.text_content("#who") or "")
    await page.wait_for_selector(f"{card}[data-ply='3']", timeout=5_000)
    assert await page.locator("#boards .board").count() == 12

    posted = time.perf_counter()
    await send(served.platform, "move", "g1", {"point": "g7"}, now_ms())
    await page.wait_for_selector(f"{card}[data-last-move='g7']", timeout=BOARD_WITHIN_S * 1000)
    figures["webhook_to_board_s"] = time.perf_counter() - posted
    assert figures["webhook_to_board_s"] < BOARD_WITHIN_S

    # A camera finding on g1: live in the case queue, with a chime; g1 goes before the boards without incidents.
    chimes = int(await page.evaluate(CHIMES))
    raised = time.perf_counter()
    first = await detector_incident(served, g1, "extra-person", "36.4.2", "g1-w", "2 faces in view")
    figures["incident_to_queue_s"] = await wait_for_case(page, "extra-person", raised)
    case = OPEN_CASE.format(kind="extra-person")
    await page.wait_for_selector(f"{card}[data-open='1']", timeout=3_000)
    assert int(await page.evaluate(CHIMES)) > chimes
    item = await page.text_content(case) or ""
    assert "36.4.2" in item and "画面中有 2 张脸" in item and "区域内有他人" in item  # the finding in the desk's words
    # The snapshot itself is shown on demand, fetched from the evidence route behind the login (640x480).
    await page.click(f"{case} button[data-evidence]")
    still = f"{case} img.evidence-still"
    await page.wait_for_function(f'() => document.querySelector("{still}")?.naturalWidth === 640', timeout=5_000)
    await page.wait_for_timeout(1_100)  # the order is recomputed every second
    orders = await page.evaluate(ORDERS)
    g1_order = int(await page.evaluate(f'() => Number(document.querySelector("{card}").style.order)'))
    assert all(g1_order < order for open_, order in orders if open_ == "0")

    # The first 36.4.2 is a warning (the ladder), which an arbiter may give (16.1).
    answer = await penalty_through_page(page, "extra-person", "36.4.2", "two faces on the camera, confirmed")
    assert answer["preview"]["penalty"] == "warning" and answer["preview"]["allowed"] == "true"
    assert (answer["status"], answer["penalty"]) == ("201", "warning") and "警告" in answer["text"]
    assert "本局第 1 次违反第 36.4.2 条：警告" in answer["text"]  # the ladder's reason in the page's words
    await page.wait_for_selector(case, state="detached", timeout=3_000)  # penalised: out of the open queue
    return first


async def wang_is_refused(page: Page, served: Served, g1: int, figures: dict[str, float]) -> int:
    """Li's incident live in the queue as a new case (screenshots); English, kept over a reload; the dialog tells Wang
    that a violation is not his to give (16.2), and the server refuses a forged loss (16.3)."""
    card = f"[data-game='{g1}']"
    raised = time.perf_counter()
    response = await served.http.post(
        served.base + "/api/v1/incidents", headers={"Authorization": f"Bearer {LI_TOKEN}"},
        json={"game": g1, "kind": "extra-person", "article": "36.4.2", "player": "g1-w",
              "summary": "a second person behind g1-w again, seen on the room camera"},
    )  # fmt: skip
    assert response.status == 201
    second = int((await response.json())["id"])
    figures["api_incident_to_queue_s"] = await wait_for_case(page, "extra-person", raised)
    await page.wait_for_selector(OPEN_CASE.format(kind="feed-gap"), timeout=5_000)  # the feed gap's case
    await page.wait_for_timeout(300)
    await views(page, "arbiter-round")
    await page.locator("#queue").screenshot(path=str(ARTIFACTS / "arbiter-queue.png"))

    await page.click("#lang")
    await page.reload()
    await page.wait_for_selector("#who[data-name='Wang']", timeout=5_000)  # the reloaded page's session
    assert await page.get_attribute("html", "lang") == "en"
    assert await page.text_content("#round-title") == "Live round"
    await page.wait_for_selector(f"{card}[data-last-move='g7']", timeout=5_000)
    await page.wait_for_selector(OPEN_CASE.format(kind="extra-person"), timeout=5_000)
    await views(page, "arbiter-round-en")

    answer = await penalty_through_page(page, "extra-person", "36.4.2", "same again")
    assert answer["status"] is None and answer["preview"]["allowed"] == "false"  # nothing to submit
    assert "may not give a violation" in answer["preview"]["text"] and "16.2" in answer["preview"]["text"]

    forged = await page.evaluate(FORGED_LOSS, [g1])
    assert (forged["status"], forged["body"]["error"], forged["body"]["article"]) == (403, "authority", "16.3")
    assert forged["bare"] == 403  # without the CSRF token it does not even get that far
    li = {"Authorization": f"Bearer {LI_TOKEN}"}
    state = await (await served.http.get(f"{served.base}/api/v1/platforms/web/games/g1", headers=li)).json()
    assert state["result"] is None
    return second


async def control(page: Page, g1: int, name: str, text: str, player: str | None = None) -> dict[str, str]:
    """Open g1's menu, choose a control, give the reason (or message), submit: the server's answer as shown."""
    await page.click(f"[data-game='{g1}'] button[data-menu]")
    which = f"#ctl-menu button[data-control='{name}']" + (f"[data-player='{player}']" if player else "")
    await page.click(which)
    if text:
        await page.fill("#ctl-text", text)
    await page.click("#ctl-submit")
    await page.wait_for_function("() => document.getElementById('ctl-answer').dataset.status > '0'", timeout=5_000)
    answer = await page.evaluate(
        "() => { const a = document.getElementById('ctl-answer');"
        " return {status: a.dataset.status, text: a.textContent}; }"
    )
    await page.click("#ctl-close")
    return cast(dict[str, str], answer)


async def wang_uses_the_board_controls(page: Page, served: Served, g1: int, figures: dict[str, float]) -> None:
    """The board's menu: pause (the clocks stop on the board) and resume; a declared result refused (16.3); the
    camera indicator and thumbnail of a real stream; a message to the player; the camera lost."""
    card = f"[data-game='{g1}']"
    answer = await control(page, g1, "pause", "the player's platform froze")
    assert answer["status"] == "200" and "Clocks stopped" in answer["text"]
    await page.wait_for_selector(f"{card} .line.state:text('Clocks stopped')", timeout=3_000)
    assert await page.locator(f"{card} .clock.running").count() == 0
    shown = await page.text_content(f"{card} .clock.black .time")
    await page.wait_for_timeout(1_200)
    assert await page.text_content(f"{card} .clock.black .time") == shown  # the clock does not run
    answer = await control(page, g1, "resume", "fixed")
    assert answer["status"] == "200"
    await page.wait_for_selector(f"{card} .clock.running", timeout=3_000)

    answer = await control(page, g1, "declare-result", "the players agree")
    assert answer["status"] == "403" and "16.3" in answer["text"] and "Refused" in answer["text"]
    assert "16.3" in (await page.text_content(f"{card} .line.ctl.refused") or "")

    li = {"Authorization": f"Bearer {LI_TOKEN}"}
    issued = await served.http.post(f"{served.base}/api/v1/players/g1-b/stream-token", headers=li)
    assert issued.status == 201
    pc = await connect(served.platform, (await issued.json())["token"], ScriptedCamera([(120, 1)]))
    try:
        started = time.perf_counter()
        await page.wait_for_selector(f"{card} .ind.cam.black[data-state='connected']", timeout=10_000)
        await page.wait_for_function(
            f'() => {{ const i = document.querySelector("{card} img[data-color=black]");'
            " return i && !i.hidden && i.naturalWidth === 320 && i.naturalHeight === 240; }",
            timeout=5_000,
        )
        figures["camera_to_thumbnail_s"] = time.perf_counter() - started
        assert await page.get_attribute(f"{card} .ind.cam.white", "data-state") == "none"  # no stream link
        first = await page.get_attribute(f"{card} img[data-color=black]", "src")
        await page.wait_for_function(
            f"(first) => document.querySelector(\"{card} img[data-color=black]\").getAttribute('src') !== first",
            arg=first,
            timeout=3_000,
        )  # refreshed about once a second
        await page.locator(card).screenshot(path=str(ARTIFACTS / "arbiter-board-camera.png"))
        answer = await control(page, g1, "message", "please sit back in view", player="g1-b")
        assert answer["status"] == "201" and "Message" in answer["text"]
    finally:
        await pc.close()
    await page.wait_for_selector(f"{card} .ind.cam.black[data-state='lost']", timeout=10_000)


async def li_gives_the_loss(page: Page, served: Served, g1: int, second: int) -> None:
    """Li, the chief: the second 36.4.2 is a violation, the third another, and two violations lose the game (15.3)."""
    card = f"[data-game='{g1}']"
    await page.click("#logout")
    await page.wait_for_selector("#login:not([hidden])", timeout=3_000)
    await log_in(page, "Li")
    answer = await penalty_through_page(page, "extra-person", "36.4.2", "confirmed on the room camera")
    assert (answer["status"], answer["penalty"]) == ("201", "violation")
    await detector_incident(served, g1, "extra-person", "36.4.2", "g1-w", "2 faces in view")
    await wait_for_case(page, "extra-person", time.perf_counter())
    answer = await penalty_through_page(page, "extra-person", "36.4.2", "third time: the person is still there")
    assert (answer["status"], answer["penalty"]) == ("201", "violation")
    assert "Game result: Black wins · penalty" in answer["text"]
    await page.wait_for_selector(f"{card}[data-status='over'][data-result='black']", timeout=3_000)
    assert "Black wins" in (await page.text_content(f"{card} .line.state") or "")
    await page.locator(card).scroll_into_view_if_needed()
    await views(page, "arbiter-result")


async def test_the_arbiters_desk_in_a_real_browser(served: Served) -> None:
    g1 = (await set_up_round(served))["g1"]
    figures: dict[str, float] = {}
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await wang_watches_and_warns(page, served, g1, figures)
            second = await wang_is_refused(page, served, g1, figures)
            await wang_uses_the_board_controls(page, served, g1, figures)
            await li_gives_the_loss(page, served, g1, second)
            assert errors == []
        finally:
            await browser.close()
    print("dashboard figures:", {name: round(value, 3) for name, value in figures.items()})


LONG_SECTION = "Male Youth (under 18), Group A of the National Championships"
HEADER = """(card) => {
    const head = card.querySelector('header');
    const line = parseFloat(getComputedStyle(head).lineHeight);
    const box = head.getBoundingClientRect();
    const shown = [...head.children].filter((child) => !child.hidden);
    const middles = new Set(shown.map((child) => {
        const r = child.getBoundingClientRect();
        return Math.round(r.top + r.height / 2);
    }));
    const cut = (node) => node.scrollWidth > node.clientWidth;
    const badge = head.querySelector('.badge'), section = head.querySelector('.section');
    const number = head.querySelector('.number');
    return {height: box.height, line, rows: middles.size,
            wrapped: shown.filter((child) => child.scrollHeight > line + 1).map((child) => child.className),
            badge: badge.hidden ? null : badge.textContent,
            badgeCut: cut(badge) || badge.getBoundingClientRect().right > box.right,
            section: section.textContent, sectionTitle: section.title, sectionCut: cut(section),
            number: number.textContent, numberCut: cut(number)};
}"""
"""A board's header as laid out: its height and line height, how many rows its parts sit on, which of them wrap, and
what is cut."""


async def header_lines(page: Page, card: str) -> dict[str, Any]:
    """The board's header at each of the desk's sizes: it must be one line at all of them (the same figures)."""
    seen: list[dict[str, Any]] = []
    for width, height in ((1366, 768), (1920, 1080)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        header: dict[str, Any] = await page.eval_on_selector(card, HEADER)
        assert header["height"] == header["line"] and header["rows"] == 1 and header["wrapped"] == [], (width, header)
        assert not header["badgeCut"] and not header["numberCut"], (width, header)
        seen.append(header)
    assert seen[0] == seen[1]
    await page.set_viewport_size({"width": 1366, "height": 768})
    return seen[0]


@pytest.mark.asyncio
async def test_an_assigned_arbiter_sees_their_section_by_default_and_all_with_the_switch(
    served: Served, tmp_path: Path
) -> None:
    """Zhao is assigned youth-m of the loaded event: its board is shown, youth-f's only with "show all". The desk
    shows the sections by name; each board's header is one line at both desk sizes: the section's name (a long one cut
    with an ellipsis, whole as its tooltip), the round and board, and the badge with the open count, never cut."""
    settings = served.context.settings
    event = tmp_path / "event.toml"
    event.write_text(EVENT_EXAMPLE.read_text("utf-8").replace('name = "Male Youth"', f"name = {LONG_SECTION!r}"),
                     "utf-8")  # fmt: skip
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, event, now=0)
        connection.execute(insert(Arbiter).values(name="Zhao", role="arbiter", token_hash=token_hash("token-zhao"),
                                                  sections=["national-youth-2021/youth-m"]))  # fmt: skip
        set_password(connection, "Zhao", PASSWORD)
    engine.dispose()
    start = now_ms() - 60_000
    ids = {}
    for section in ("youth-m", "youth-f"):
        data = {"black": {"id": f"{section}-p1"}, "white": {"id": f"{section}-p3"}, "rule": "renju",
                "opening": "five-move-two", "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
        ids[section] = (await send(served.platform, "game.created", f"{section}-r1-b1", data, start - 60_000))["game"]
    for n in range(12):  # a two-digit badge
        response = await served.http.post(
            served.base + "/api/v1/incidents", headers={"Authorization": f"Bearer {LI_TOKEN}"},
            json={"game": ids["youth-m"], "kind": f"note-{n}", "player": "youth-m-p1", "summary": "seen"},
        )  # fmt: skip
        assert response.status == 201
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Zhao")
            mine, other = f"[data-game='{ids['youth-m']}']", f"[data-game='{ids['youth-f']}']"
            await page.wait_for_selector(mine, timeout=5_000)
            await page.wait_for_selector(other, state="hidden", timeout=5_000)
            assert await page.is_visible("#show-all")
            await page.wait_for_selector(f"{mine}[data-open='12'] header .section:text('Male Youth')", timeout=5_000)
            header = await header_lines(page, mine)
            assert header["section"] == LONG_SECTION and header["sectionCut"], header  # cut, whole as the tooltip
            assert header["sectionTitle"] == f"2021 National Youth Gomoku Championships · {LONG_SECTION}"
            assert (header["number"], header["badge"]) == ("第1台", "12"), header  # the round in its tooltip
            assert await page.get_attribute(f"{mine} header .number", "title") == "第1轮 · 第1台"
            await page.check("#show-all")
            await page.wait_for_selector(other, state="visible", timeout=3_000)
            header = await header_lines(page, other)
            assert (header["section"], header["sectionCut"], header["badge"]) == ("Female Youth", False, None), header
            await page.click("#lang")
            await page.wait_for_selector(f"{mine} header .number:text('B1')", timeout=3_000)
            assert (await header_lines(page, mine))["number"] == "B1"
            assert "national-youth-2021" not in (await page.text_content("#boards") or "")  # names, not slugs
            options = await page.eval_on_selector_all("#section option", "os => os.map(o => [o.value, o.text])")
            assert options == [["", "All"], ["national-youth-2021/youth-f", "Female Youth"],
                               ["national-youth-2021/youth-m", LONG_SECTION]]  # fmt: skip
            await page.select_option("#section", "national-youth-2021/youth-f")
            await page.wait_for_selector(mine, state="hidden", timeout=3_000)
            assert not errors, errors
        finally:
            await browser.close()


async def choose_from_the_round_menu(page: Page, action: str) -> None:
    """The round's action chosen from the top bar's menu: suspend with the mouse (the open menu as a screenshot),
    resume with the keyboard (↓ on the menu's button opens it at its first item, ↓ again goes to the next, Enter
    chooses it); the choice closes the menu."""
    if action == "suspend":
        await page.click("#round-menu")
        assert await page.get_attribute("#round-menu", "aria-expanded") == "true"
        await page.screenshot(path=str(ARTIFACTS / "arbiter-round-menu.png"),
                              clip={"x": 0, "y": 0, "width": 1366, "height": 160})  # fmt: skip
        await page.click("#round-suspend")
    else:
        await page.focus("#round-menu")
        await page.keyboard.press("ArrowDown")
        await page.keyboard.press("ArrowDown")
        assert await page.evaluate("() => document.activeElement.id") == "round-resume"
        await page.keyboard.press("Enter")
    assert await page.is_hidden("#round-items")
    assert await page.get_attribute("#round-menu", "aria-expanded") == "false"


@pytest.mark.asyncio
async def test_the_round_is_suspended_and_resumed_from_the_header(served: Served) -> None:
    """Zhao (arbiter, assigned youth-m) suspends the round from the header: the game action ``suspend`` with
    ``round_wide`` goes to every live game of his visible section only (20.1); the dialog counts them; then he
    resumes it. youth-f's game is left alone."""
    settings = served.context.settings
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EVENT_EXAMPLE, now=0)
        connection.execute(insert(Arbiter).values(name="Zhao", role="arbiter", token_hash=token_hash("token-zhao"),
                                                  sections=["national-youth-2021/youth-m"]))  # fmt: skip
        set_password(connection, "Zhao", PASSWORD)
    engine.dispose()
    start = now_ms() - 60_000
    ids = {}
    for section in ("youth-m", "youth-f"):
        name = f"{section}-r1-b1"
        data = {"black": {"id": f"{section}-p1"}, "white": {"id": f"{section}-p3"}, "rule": "renju",
                "opening": "five-move-two", "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
        ids[section] = (await send(served.platform, "game.created", name, data, start - 60_000))["game"]
        for player in (f"{section}-p1", f"{section}-p3"):
            await send(served.platform, "player.joined", name, {"player": player}, start - 30_000)
        assert (await send(served.platform, "move", name, {"point": "h8"}, start + 5_000))["status"] == "applied"
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(served.base + "/arbiter")
            await log_in(page, "Zhao")
            await page.wait_for_selector(f"[data-game='{ids['youth-m']}'][data-status='live']", timeout=5_000)
            await choose_from_the_round_menu(page, "suspend")
            assert "1" in (await page.text_content("#round-dlg-about") or "")
            await page.click("#round-submit")  # no reason: refused by the page
            assert await page.get_attribute("#round-answer", "class") == "refused"
            await page.fill("#round-reason", "the platform is down for everyone")
            await page.click("#round-submit")
            await page.wait_for_selector("#round-answer[data-status='ok'][data-done='1']", timeout=5_000)
            kinds = {}
            for section, game in ids.items():
                async with served.http.get(
                    served.base + f"/api/v1/games/{game}/timeline", headers={"Authorization": f"Bearer {LI_TOKEN}"}
                ) as response:
                    timeline = await response.json()
                kinds[section] = [e["text"] for e in timeline["events"] if e.get("kind") == "suspended"]
            assert kinds == {"youth-m": ["the round is suspended: position and clocks sealed"], "youth-f": []}
            await page.click("#round-close")
            await choose_from_the_round_menu(page, "resume")
            await page.fill("#round-reason", "the platform is back")
            await page.click("#round-submit")
            await page.wait_for_selector("#round-answer[data-status='ok'][data-done='1']", timeout=5_000)
            assert not errors, errors
        finally:
            await browser.close()
