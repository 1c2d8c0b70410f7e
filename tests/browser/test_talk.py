"""Talking to a player (issue 15) between two real browsers: the chief's desk (Chromium whose fake microphone plays a
440 Hz tone) opens a player's large live view and holds its push-to-talk button; the player's page (another Chromium,
its fake camera) says an arbiter is speaking and plays the sound, measured on the page with Web Audio while the
button is held and after it is released; closing the view ends the talk (audited)."""

from __future__ import annotations

import asyncio
import math
import time
import wave
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.browser.chromium import launch, require
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import LI_TOKEN, Served, event_settings, log_in, serve
from tests.browser.test_player_devices import ARTIFACTS, CONNECTED, write_clip
from tests.proctor.test_live_views import audit

pytestmark = pytest.mark.asyncio

LI = {"Authorization": f"Bearer {LI_TOKEN}"}
PLAYER, OTHER = "talk-1", "talk-2"
EVENT = """
[event]
slug = "talk-2026"
name = "Talk Open"

[[sections]]
slug = "open"
name = "Open"
time_control = "rapid-15"

[[sections.players]]
start_no = 1
name = "Talk One"
platform_ref = "talk-1"

[[sections.players]]
start_no = 2
name = "Talk Two"
platform_ref = "talk-2"
"""
LISTEN = """
// The player's page: how loud, and at which pitch, the arbiter's voice plays (Web Audio on the page's own element).
async () => {
  const element = document.getElementById("arbiter-voice");
  if (!element.srcObject) return null;
  window.heard = window.heard || (() => {
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 8192;
    context.createMediaStreamSource(element.srcObject).connect(analyser);
    return { context, analyser };
  })();
  await window.heard.context.resume();
  const { analyser, context } = window.heard;
  const wave = new Float32Array(analyser.fftSize);
  analyser.getFloatTimeDomainData(wave);
  const spectrum = new Float32Array(analyser.frequencyBinCount);
  analyser.getFloatFrequencyData(spectrum);
  let peak = 0;
  for (let i = 1; i < spectrum.length; i++) if (spectrum[i] > spectrum[peak]) peak = i;
  const rms = Math.sqrt(wave.reduce((sum, v) => sum + v * v, 0) / wave.length);
  return { rms, hz: peak * context.sampleRate / analyser.fftSize };
}
"""


def write_tone(path: Path, seconds: float = 30.0) -> None:
    rate = 48_000
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * 32767 * np.sin(2 * math.pi * 440 * t)).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())


async def loudness(page: Page, seconds: float) -> list[dict[str, float]]:
    """What the page plays, measured every 0.25 s for ``seconds``."""
    measured = []
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        found = await page.evaluate(LISTEN)
        if found is not None:
            measured.append(found)
        await asyncio.sleep(0.25)
    return measured


@dataclass
class Heard:
    said: str = ""
    quiet: list[dict[str, float]] = field(default_factory=list)
    held: list[dict[str, float]] = field(default_factory=list)
    released: list[dict[str, float]] = field(default_factory=list)


async def player_page(browser: Browser, link: str) -> Page:
    player = await (await browser.new_context(viewport={"width": 390, "height": 900})).new_page()
    await player.goto(link)
    await player.check("#agree")
    await player.click("#start")
    await player.wait_for_function(CONNECTED, timeout=15_000)
    return player


async def hold_down(desk: Page, talk: str, player: Page) -> None:
    """The arbiter holds the talk button down until the desk says it speaks and the player's page plays a sound."""
    box = await (await desk.wait_for_selector(talk)).bounding_box()  # type: ignore[union-attr]
    assert box is not None
    await desk.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await desk.mouse.down()
    await desk.wait_for_selector(f"{talk}[data-state='speaking']", timeout=15_000)
    await player.wait_for_selector("#talk-state:not([hidden])", timeout=10_000)
    await player.wait_for_function("() => document.getElementById('arbiter-voice').srcObject", timeout=10_000)


async def hold_to_talk(served: Served, browser: Browser, player: Page, game_id: int, heard: Heard) -> None:
    desk = await (await browser.new_context(viewport={"width": 1366, "height": 900})).new_page()
    await desk.goto(served.base + "/arbiter")
    await log_in(desk, "Li")
    await desk.click(f"[data-menu='{game_id}']")
    await desk.click(f"#ctl-menu button[data-live='large'][data-player='{PLAYER}']")
    await desk.wait_for_selector("#live-large .live-tile[data-state='playing']", timeout=15_000)
    talk = "#live-large .live-head button[data-role='talk']"
    assert (await desk.text_content(talk)) == "按住说话"
    heard.quiet = await loudness(player, 0.5)  # nobody has spoken: nothing plays
    # The first press opens the talk (the desk's microphone, a connection of its own); holding it speaks.
    await hold_down(desk, talk, player)
    heard.said = await player.text_content("#talk-state") or ""
    heard.held = await loudness(player, 3.0)
    ARTIFACTS.mkdir(exist_ok=True)
    await desk.screenshot(path=str(ARTIFACTS / "arbiter-talk.png"))
    await player.screenshot(path=str(ARTIFACTS / "player-talk.png"), full_page=True)
    await desk.mouse.up()
    await desk.wait_for_selector(f"{talk}[data-state='idle']", timeout=5_000)
    await asyncio.sleep(1.0)  # what was in flight plays out
    heard.released = await loudness(player, 1.5)
    await desk.click("#live-large .live-head button[data-role='close']")
    await player.wait_for_selector("#talk-state", state="hidden", timeout=10_000)


async def test_an_arbiter_holds_to_talk_and_the_players_page_plays_it(tmp_path: Path) -> None:
    require()
    settings, secret = event_settings(tmp_path, EVENT)
    clip, tone = tmp_path / "front.y4m", tmp_path / "tone.wav"
    write_clip(clip, 4.0, side=False)
    write_tone(tone)
    common = ("--use-fake-ui-for-media-stream", "--allow-loopback-in-peer-connection",
              "--use-fake-device-for-media-stream", "--autoplay-policy=no-user-gesture-required")  # fmt: skip
    heard = Heard()
    async with serve(settings, secret) as served, async_playwright() as playwright:
        game_id = await game(served.platform, "g1", PLAYER, OTHER, int(time.time() * 1000) - 10_000, (PLAYER, OTHER))
        async with served.http.post(f"{served.base}/api/v1/players/{PLAYER}/stream-token", headers=LI) as response:
            link = served.base + (await response.json())["url"]
        player_browser, desk_browser = await asyncio.gather(
            launch(playwright, *common, f"--use-file-for-fake-video-capture={clip}"),
            launch(playwright, *common, f"--use-file-for-fake-audio-capture={tone}"),
        )
        try:
            player = await player_page(player_browser, link)
            await hold_to_talk(served, desk_browser, player, game_id, heard)
        finally:
            await asyncio.gather(player_browser.close(), desk_browser.close())
    assert heard.said == "裁判可以直接和你说话：请注意听（声音不会保存）"
    loud = [m for m in heard.held if m["rms"] > 0.02]
    assert len(loud) >= len(heard.held) // 2, heard.held  # the tone plays while the button is held...
    assert all(abs(m["hz"] - 440) < 15 for m in loud), heard.held  # ...at its pitch
    assert max((m["rms"] for m in heard.quiet), default=0.0) < 0.005, heard.quiet
    assert max(m["rms"] for m in heard.released[-3:]) < 0.005, heard.released  # ...and is muted once released
    opened, ended = audit(settings, "camera.talk"), audit(settings, "camera.talk-end")
    assert [(row.actor, row.subject) for row in opened] == [("Li (chief)", f"player:{PLAYER}")]
    assert len(ended) == 1 and ended[0].detail["talk"] == opened[0].detail["talk"]
