"""The microphone in a real browser (issue 15): Debian's Chromium sends its fake camera (a player whose mouth does not
move) and its fake microphone (a WAV of a quiet room, then a voice giving advice in Mandarin, made with Debian's
espeak-ng) to a section that requires the microphone.  Before agreeing, the player reads what is recorded of the
sound and for how long, in both languages; the speech raises a ``voice`` review flag with its WAV clip.  A second
player whose browser gives no microphone still sends the camera, the page says the microphone is missing, and the
service raises ``microphone-lost``.

Chromium loops its fake audio file: the advice is heard again every 18 s while the page runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import async_playwright

from tests.browser.chromium import launch, require
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import LI_TOKEN, Served, event_settings, log_in, serve
from tests.browser.test_player_devices import ARTIFACTS, CONNECTED, FPS, wait_incident
from tests.proctor.test_microphone import advice
from tests.video.frames import room_photo, scene
from video.errors import ModelUnavailableError
from video.models import SILERO_VAD, model_path

pytestmark = pytest.mark.asyncio

LI = {"Authorization": f"Bearer {LI_TOKEN}"}
MODELS = Path(__file__).resolve().parents[2] / "models"
"""The models ``proctor fetch-models`` put beside the project (scripts/test runs it before the tests)."""
PLAYER, SILENT = "mic-1", "mic-2"
EVENT = """
[event]
slug = "mic-2026"
name = "Microphone Open"

[[sections]]
slug = "kids"
name = "Under 12"
time_control = "rapid-15"

[sections.policy]
microphone_required = true
sound_retention_days = 7

[sections.policy.thresholds]
microphone_lost_s = 3

[[sections.players]]
start_no = 1
name = "Mic One"
platform_ref = "mic-1"

[[sections.players]]
start_no = 2
name = "Mic Two"
platform_ref = "mic-2"
"""
NO_MICROPHONE = """
// This player's browser has no microphone: asking for one fails as Chromium fails it (NotFoundError).
const ask = MediaDevices.prototype.getUserMedia;
MediaDevices.prototype.getUserMedia = function (constraints) {
  if (constraints && constraints.audio) {
    return Promise.reject(new DOMException("Requested device not found", "NotFoundError"));
  }
  return ask.call(this, constraints);
};
"""


@dataclass
class Heard:
    """What the scenario saw, for the tests to assert."""

    notice: dict[str, str] = field(default_factory=dict)
    """The consent's microphone paragraph, in Chinese and English."""
    voice: dict[str, Any] | None = None
    clip: bytes = b""
    lost: dict[str, Any] | None = None
    silent_status: dict[str, str] = field(default_factory=dict)
    """The page of the player without a microphone: its status (state and words)."""
    tracks: dict[str, list[str]] = field(default_factory=dict)
    """The kinds of the tracks each page sends."""
    game: int = 0
    desk_loudest: float = -100.0
    """The loudest level (dBFS) the desk's meter showed for the player's microphone."""
    desk_listening: bool = False
    roster: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each player's microphone line in the desk's camera roster: its state and words (in Chinese)."""
    pills: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each page's microphone in its devices' guide: its state and words (the silent page's in English)."""


def write_still_face(path: Path, seconds: float) -> None:
    """The player sitting still, mouth closed (a photo: the mouth never moves), swaying a little, at :data:`FPS`."""
    rng, room = np.random.default_rng(5), room_photo()
    pictures = [scene(1, rng, round(6 * np.sin(2 * np.pi * i / 10)), 1.0, room) for i in range(10)]
    frames = [cv2.cvtColor(p, cv2.COLOR_BGR2YUV_I420).tobytes() for p in pictures]
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W640 H480 F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(int(seconds * FPS)):
            out.write(b"FRAME\n" + frames[index % len(frames)])


@pytest.fixture(scope="module")
def heard(tmp_path_factory: pytest.TempPathFactory) -> Heard:
    """The scenario, once for the module's tests (one browser, two pages, about 30 s)."""
    require()
    missing = [] if shutil.which("espeak-ng") else ["Debian's espeak-ng"]
    try:
        model_path(MODELS, SILERO_VAD)
    except ModelUnavailableError:
        missing.append("Silero VAD's model (proctor fetch-models)")
    if missing:
        reason = f"needs {' and '.join(missing)} (.ci/run and scripts/test provide them)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return asyncio.run(scenario(tmp_path_factory.mktemp("microphone")))


async def scenario(tmp_path: Path) -> Heard:
    settings, secret = event_settings(tmp_path, EVENT, MODELS)
    clip, sound = tmp_path / "face.y4m", tmp_path / "advice.wav"
    write_still_face(clip, 4.0)
    advice(sound)
    seen = Heard()
    async with serve(settings, secret) as served, async_playwright() as playwright:
        seen.game = await game(served.platform, "g1", PLAYER, SILENT, int(time.time() * 1000) - 10_000,
                               (PLAYER, SILENT))  # fmt: skip
        links = {}
        for player in (PLAYER, SILENT):
            async with served.http.post(f"{served.base}/api/v1/players/{player}/stream-token", headers=LI) as response:
                links[player] = served.base + (await response.json())["url"]
        browser = await launch(playwright, "--use-fake-ui-for-media-stream", "--allow-loopback-in-peer-connection",
                               "--use-fake-device-for-media-stream", f"--use-file-for-fake-video-capture={clip}",
                               f"--use-file-for-fake-audio-capture={sound}")  # fmt: skip
        try:
            await asyncio.gather(the_talker(served, browser, links[PLAYER], seen),
                                 the_silent(served, browser, links[SILENT], seen))  # fmt: skip
        finally:
            await browser.close()
    if seen.voice is not None:
        (evidence,) = [a["verdict"]["evidence"] for a in seen.voice["actions"] if a["action"] == "evidence"]
        seen.clip = (tmp_path / "media" / evidence["media"][0]).read_bytes()
    return seen


async def the_talker(served: Served, browser: Any, link: str, seen: Heard) -> None:
    page = await (await browser.new_context(viewport={"width": 390, "height": 900})).new_page()
    await page.goto(link)
    await page.wait_for_selector("#consent-microphone:not([hidden])", timeout=5_000)
    seen.notice["zh"] = await page.text_content("#consent-microphone") or ""
    await page.click("#lang")
    seen.notice["en"] = await page.text_content("#consent-microphone") or ""
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "player-microphone-notice-en.png"), full_page=True)
    await page.check("#agree")
    await page.click("#start")
    await page.wait_for_function(CONNECTED, timeout=15_000)
    seen.tracks[PLAYER] = await page.evaluate("() => document.getElementById('preview').srcObject"
                                              ".getTracks().map((t) => t.kind).sort()")  # fmt: skip
    seen.pills[PLAYER] = await microphone_pill(page, "connected")

    async def clipped() -> dict[str, Any] | None:
        async with served.http.get(f"{served.base}/api/v1/incidents?kind=voice", headers=LI) as response:
            found: list[dict[str, Any]] = await response.json()
        return next((i for i in found if any(a["action"] == "evidence" for a in i["actions"])), None)

    ends = time.monotonic() + 60  # the advice starts 3 s into the sound, which loops; a busy machine is slower
    while time.monotonic() < ends and (found := await clipped()) is None:
        await asyncio.sleep(0.5)
    seen.voice = found
    await the_desk_hears(served, browser, seen)


async def the_desk_hears(served: Served, browser: Any, seen: Heard) -> None:
    """The chief's camera roster says each player's microphone (the silent page's lost); the large view of the player:
    the microphone's level meter moves with the advice, and Listen unmutes."""
    desk = await (await browser.new_context(viewport={"width": 1366, "height": 900})).new_page()
    await desk.goto(served.base + "/arbiter")
    await log_in(desk, "Li")
    await desk.click("#roster-open")
    await desk.wait_for_selector("#roster[open]")
    await desk.select_option("#roster-section", "mic-2026/kids")
    for player, state in ((PLAYER, "connected"), (SILENT, "lost")):  # the roster polls: the state as it comes
        line = f"#roster-rows tr[data-player='{player}'] .device-line[data-device='microphone']"
        with contextlib.suppress(PlaywrightTimeout):
            await desk.wait_for_selector(f"{line} .cam-state[data-state='{state}']", timeout=15_000)
        seen.roster[player] = (await desk.get_attribute(f"{line} .cam-state", "data-state") or "",
                               await desk.text_content(line) or "")  # fmt: skip
    await desk.keyboard.press("Escape")
    await desk.click(f"[data-menu='{seen.game}']")
    await desk.click(f"#ctl-menu button[data-live='large'][data-player='{PLAYER}']")
    await desk.wait_for_selector("#live-large .live-head [data-role='level']", timeout=15_000)
    loudest, ends = -100.0, time.monotonic() + 25  # the advice comes round every 18 s
    while time.monotonic() < ends and loudest < -40:
        level = await desk.get_attribute("#live-large .live-head [data-role='level']", "data-dbfs")
        loudest = max(loudest, float(level or -100))
        await asyncio.sleep(0.2)
    seen.desk_loudest = loudest
    await desk.click("#live-large .live-head button[data-role='listen']")
    seen.desk_listening = await desk.evaluate("() => !document.querySelector('#live-large audio').muted")
    await desk.close()


async def the_silent(served: Served, browser: Any, link: str, seen: Heard) -> None:
    context = await browser.new_context(viewport={"width": 390, "height": 900})
    await context.add_init_script(NO_MICROPHONE)
    page = await context.new_page()
    await page.goto(link)
    await page.check("#agree")
    await page.click("#start")
    await page.wait_for_selector("#status[data-state='noMicrophone']", timeout=15_000)
    seen.silent_status["zh"] = await page.text_content("#status") or ""
    await page.click("#lang")
    seen.silent_status["en"] = await page.text_content("#status") or ""
    seen.tracks[SILENT] = await page.evaluate("() => document.getElementById('preview').srcObject"
                                              ".getTracks().map((t) => t.kind).sort()")  # fmt: skip
    seen.lost = await wait_incident(served, "microphone-lost", 20)
    seen.pills[SILENT] = await microphone_pill(page, "lost")


async def microphone_pill(page: Any, state: str) -> tuple[str, str]:
    """The page's word on its microphone once the service says ``state`` (its state and words; "" if never)."""
    try:
        await page.wait_for_selector(f"#state-microphone[data-state='{state}']", timeout=15_000)
    except PlaywrightTimeout:
        return (await page.get_attribute("#state-microphone", "data-state") or "", "")
    return state, await page.text_content("#state-microphone") or ""


async def test_the_page_says_what_is_recorded_of_the_sound_and_for_how_long(heard: Heard) -> None:
    assert "7天" in heard.notice["zh"] and "麦克风" in heard.notice["zh"] and "实时" in heard.notice["zh"]
    assert "deleted after 7 days" in heard.notice["en"] and "not a penalty" in heard.notice["en"]
    assert "watching you live may also listen" in heard.notice["en"]


async def test_speech_from_the_browsers_microphone_raises_a_voice_flag_with_its_clip(heard: Heard) -> None:
    assert heard.tracks[PLAYER] == ["audio", "video"]
    assert heard.voice is not None, "no voice flag with a clip within 60 s"
    assert heard.voice["player"] == PLAYER and heard.voice["evidence"]["device"] == "microphone"
    assert heard.voice["article"] == "36.4.2, 36.4.3"
    (evidence,) = [a["verdict"]["evidence"] for a in heard.voice["actions"] if a["action"] == "evidence"]
    assert hashlib.sha256(heard.clip).hexdigest() == evidence["sha256"] and heard.clip[:4] == b"RIFF"


async def test_a_browser_without_a_microphone_still_sends_the_camera_and_the_case_is_raised(heard: Heard) -> None:
    assert heard.tracks[SILENT] == ["video"]
    assert "麦克风" in heard.silent_status["zh"] and "microphone could not be opened" in heard.silent_status["en"]
    assert heard.lost is not None and heard.lost["player"] == SILENT


async def test_the_desks_large_view_shows_the_microphones_level_and_can_listen(heard: Heard) -> None:
    assert heard.desk_loudest > -40, heard.desk_loudest  # the advice at -28 dBFS over a room at -62 to -50
    assert heard.desk_listening


async def test_each_page_shows_its_microphones_state(heard: Heard) -> None:
    assert heard.pills[PLAYER] == ("connected", "connected"), heard.pills  # both pages switched to English
    assert heard.pills[SILENT] == ("lost", "connection lost"), heard.pills


async def test_the_desks_roster_shows_each_microphone(heard: Heard) -> None:
    assert heard.roster[PLAYER] == ("connected", "麦克风 已连接"), heard.roster
    assert heard.roster[SILENT] == ("lost", "麦克风 已断开"), heard.roster
