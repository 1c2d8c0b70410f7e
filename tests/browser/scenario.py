"""One browser scenario, run by tests/browser/test_player_page.py inside a private network namespace (``unshare -n``):
Chromium does not gather ICE candidates on loopback, so the service listens on a veth address of the namespace's own.

The service runs here on a fresh SQLite file; Debian's Chromium (driven by Playwright) opens the player's page with a
fake camera that plays a .y4m this script composes; the script prints one JSON line with what the service recorded.

    unshare -n python -m tests.browser.scenario left|extra|frozen|virtual|blurred WORKDIR
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from aiohttp import ClientSession, web
from playwright.async_api import async_playwright
from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.context import CONTEXT
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from proctor.signatures import signed_headers
from tests.browser.chromium import launch
from tests.proctor.conftest import iso, register_platform
from tests.video.frames import composed, room_photo, scene
from video.checks import Thresholds

ADDRESS, PORT = "10.99.0.1", 8765
FPS = 5
SCRIPTS = {
    # (seconds, people in view): the clip Chromium's fake camera plays (and loops).
    "left": [(8.0, 1), (20.0, 0)],
    "extra": [(6.0, 1), (20.0, 2)],
    # -1: the last picture repeats exactly (a frozen camera, or a still image fed as one).
    "frozen": [(6.0, 1), (20.0, -1)],
    # The player in front of a real room photo, replaced or blurred by an app from the stream's start.
    "virtual": [(20.0, 1)],
    "blurred": [(20.0, 1)],
}
CHANGE_AT = {"left": 8.0, "extra": 6.0, "frozen": 6.0, "virtual": 0.0, "blurred": 0.0}
KIND = {"left": "left-area", "extra": "extra-person", "frozen": "camera-frozen", "virtual": "virtual-background",
        "blurred": "background-blurred"}  # fmt: skip
WAIT_S = {"virtual": 30.0, "blurred": 30.0}
"""How long after the change each case waits for its incident (20 s unless said): the background checks need a
window of frames (and these start with the stream, through the encoder's warm-up)."""
WALK_OUT_S = 1.5
"""The player walks out of the picture to the side over the last 1.5 s before the room is empty: a player who
vanishes where they sat went down over the board (video/analysis.py's ``VANISHED_NEAR``), not out of the area."""
THRESHOLDS = Thresholds(absence_s=3.0, extra_person_s=2.0, frozen_s=3.0, clear_s=2.0)
ARBITER_TOKEN = "browser-test-arbiter"
AUTH = {"Authorization": f"Bearer {ARBITER_TOKEN}"}


def private_network() -> None:
    for command in (
        "ip link set lo up",
        "ip link add v0 type veth peer name v1",
        f"ip addr add {ADDRESS}/24 dev v0",
        "ip addr add 10.99.0.2/24 dev v1",
        "ip link set v0 up",
        "ip link set v1 up",
    ):
        subprocess.run(command.split(), check=True)


def write_y4m(path: Path, script: list[tuple[float, int]], case: str = "") -> None:
    """I420 frames with a YUV4MPEG2 header, as Chromium's ``--use-file-for-fake-video-capture`` reads them."""
    rng = np.random.default_rng(11)
    room = room_photo()
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W640 H480 F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        frames = int(script[-1][0] * FPS)
        picture = b""
        for index in range(frames):
            second = index / FPS
            people = next(n for until, n in script if second < until)
            sway, gain = round(8 * np.sin(second * 1.7)), 1 + 0.06 * np.sin(second / 2)
            if case == "left" and WALK_OUT_S > CHANGE_AT["left"] - second > 0:  # seen walking out, to the side
                sway += round(520 * (1 - (CHANGE_AT["left"] - second) / WALK_OUT_S))
            if case in ("virtual", "blurred"):
                frame = composed(room, rng, sway, gain, replaced=case == "virtual", blur=12.0 * (case == "blurred"))
                picture = cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes()
            elif people >= 0:  # a player who sways a little, and the camera's exposure following the room's light
                frame = scene(people, rng, sway, gain, room)  # a real photo as the room: a synthetic smooth one
                picture = cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes()  # looks like a blurred room
            out.write(b"FRAME\n" + picture)


def prepare_database(
    url: str, platform: str = "web", arbiter: tuple[str, str, str] = ("Arb", "arbiter", ARBITER_TOKEN)
) -> str:
    """A migrated database with the platform and an arbiter (name, role, bearer token); the platform's webhook
    secret."""
    secret = register_platform(url, platform)
    name, role, token = arbiter
    engine = create_database_engine(Settings(database_url=url))
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(token)))
    engine.dispose()
    return secret


async def start_game(http: ClientSession, base: str, secret: str) -> None:
    """A game that started a few seconds ago, both players present."""
    start = int(time.time() * 1000) - 3_000
    created = {"black": {"id": "web-b", "name": "Black"}, "white": {"id": "web-w", "name": "White"},
               "rule": "renju", "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    events = [("game.created", created, start - 60_000)]
    events += [("player.joined", {"player": f"web-{side}"}, start - 30_000) for side in "bw"]
    for seq, (kind, data, at) in enumerate(events, start=1):
        body = json.dumps({"type": kind, "game_id": "g1", "seq": seq, "at": iso(at), "data": data}).encode()
        headers = signed_headers(secret, f"msg_{seq}", int(time.time()), body)
        async with http.post(f"{base}/api/v1/webhooks/web", data=body, headers=headers) as response:
            assert response.status in (200, 201, 202), await response.text()


async def play(http: ClientSession, base: str, link: str, clip: Path, case: str) -> dict[str, Any]:
    """Chromium opens the player's page, agrees, starts the camera; then wait for the case's incident."""
    result: dict[str, Any] = {"incident": None}
    async with async_playwright() as playwright:
        browser = await launch(
            playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={clip}",
            # A camera needs a secure context: HTTPS in production, this switch for the test's address.
            f"--unsafely-treat-insecure-origin-as-secure={base}",
        )  # fmt: skip
        page = await browser.new_page()
        page.on("console", lambda message: print("console:", message.text, file=sys.stderr))
        page.on("pageerror", lambda error: print("page error:", error, file=sys.stderr))
        await page.goto(base + link)
        await page.check("#agree")
        camera_started = time.time()
        await page.click("#start")
        # A function, not an expression: the page's Content-Security-Policy allows no eval of strings.
        connected = "() => document.getElementById('status').dataset.state === 'connected'"
        try:
            await page.wait_for_function(connected, timeout=15_000)
        finally:
            result["status"] = await page.get_attribute("#status", "data-state")
        result["connected_after_s"] = time.time() - camera_started
        while time.time() - camera_started < CHANGE_AT[case] + WAIT_S.get(case, 20.0):
            await asyncio.sleep(0.25)
            async with http.get(f"{base}/api/v1/incidents?kind={KIND[case]}", headers=AUTH) as response:
                found = await response.json()
            if found:
                result["incident"] = found[0]
                result["detected_after_change_s"] = time.time() - camera_started - CHANGE_AT[case]
                break
        await browser.close()
    return result


async def run(case: str, workdir: Path) -> dict[str, Any]:
    clip = workdir / "camera.y4m"
    write_y4m(clip, SCRIPTS[case], case)
    database = f"sqlite:///{workdir / 'proctor.db'}"
    secret = prepare_database(database)
    settings = Settings(database_url=database, host=ADDRESS, port=PORT, media_dir=str(workdir / "media"))
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, ADDRESS, PORT).start()
    base = f"http://{ADDRESS}:{PORT}"
    try:
        ingest = app[CONTEXT].camera.ingest
        assert ingest is not None
        ingest.settings.thresholds = THRESHOLDS
        async with ClientSession() as http:
            await start_game(http, base, secret)
            async with http.post(f"{base}/api/v1/players/web-b/stream-token",
                                 headers={"Authorization": f"Bearer {ARBITER_TOKEN}"}) as response:  # fmt: skip
                link = (await response.json())["url"]
            result = await play(http, base, link, clip, case)
            async with http.get(f"{base}/api/v1/incidents", headers=AUTH) as response:
                result["all_incidents"] = [(i["kind"], i["summary"]) for i in await response.json()]
        incident = result["incident"]
        if incident and incident["evidence"].get("media"):
            snapshot = Path(settings.media_dir) / incident["evidence"]["media"][0]
            result["snapshot_sha256"] = hashlib.sha256(snapshot.read_bytes()).hexdigest() if snapshot.exists() else None
        result["frames_analysed"] = sum(s.frames_analysed for s in ingest.sessions.values())
    finally:
        await runner.cleanup()
    return result


def main() -> None:
    case, workdir = sys.argv[1], Path(sys.argv[2])
    private_network()
    print(json.dumps(asyncio.run(run(case, workdir))))


if __name__ == "__main__":
    main()
