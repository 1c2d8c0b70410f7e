"""The evaluation set's browser part: clips played by Debian's Chromium through a fake camera on the player's own page
(``/play/{token}``), sent by Chromium's own WebRTC stack and VP8 encoder at what the page asks (5 frames a second,
300 kbit/s), into the whole service (``proctor.app``, its defaults: every check, the service's thresholds).

Usage: python benchmarks/browser.py [--only PART,...] [--browsers N] [--verbose]

The clips are ``benchmarks.evalset.browser_scenarios()`` (12 minutes: normal play with hard negatives, leaving, a
second person passing and standing behind, the lens covered, a frozen camera, a replaced and a blurred background
from the start and switched on mid-stream), composed as the rest of the set is and written as .y4m files for
Chromium's ``--use-file-for-fake-video-capture``.  Chromium gathers no ICE candidates on loopback, so the script runs
itself again inside a private network namespace (``unshare -n``, a veth pair: as tests/browser do) and serves the
service on the namespace's own address.  Each clip is one player (seated in a game an hour ahead, so that the
service knows them), one stream link, one browser; a finding's time is when the service's ingest raised it, from
the moment the page was asked to start the camera (the fake camera's first frame: within about 0.2 s).  It scores
the clips as ``benchmarks/detectors.py`` does and prints the same table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import ClientSession, web
from playwright.async_api import async_playwright

from benchmarks.composition import Composer, Cutout, make_cutouts
from benchmarks.detectors import ROOT, table
from benchmarks.evalset import ClipLabels, ClipSpec, Raised, browser_scenarios, labels_for
from benchmarks.media import default_cache, ensure_media
from proctor.app import create_app
from proctor.context import CONTEXT
from proctor.settings import Settings
from proctor.signatures import signed_headers
from tests.browser.chromium import CHROMIUM, launch
from tests.browser.scenario import ADDRESS, prepare_database, private_network
from tests.proctor.conftest import iso
from video.analysis import FrameAnalyser
from video.checks import Finding, Observation
from video.devices import StreamKey

PORT = 8766
GRACE_S = 2.0
"""Findings are collected until this long after a clip's last frame (analysis still under way)."""
INSIDE = "PROCTOR_BENCH_NAMESPACE"
"""Set when the script runs inside its own network namespace."""
TOKEN = "browser-benchmark-arbiter"


@dataclass
class Played:
    spec: ClipSpec
    raised: list[Raised] = field(default_factory=list)
    connected_after_s: float | None = None
    frames_analysed: int = 0
    error: str = ""
    started: float = 0.0
    """When the page was asked to start the camera (wall time)."""


def write_y4m(spec: ClipSpec, cutouts: dict[str, Cutout], paths: dict[str, Path], path: Path) -> None:
    """The clip's frames as I420 with a YUV4MPEG2 header, at its frame rate (Chromium plays the file at that rate)."""
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W640 H480 F{int(spec.fps)}:1 Ip A1:1 C420jpeg\n".encode())
        for _, frame, _ in Composer(spec, cutouts, paths).frames():
            out.write(b"FRAME\n" + cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())


async def seat(http: ClientSession, base: str, secret: str, player: str, number: int) -> None:
    """A game an hour from now with ``player`` as Black, so that the service knows the player."""
    start = int(time.time() * 1000) + 3_600_000
    data = {"black": {"id": player, "name": player}, "white": {"id": f"{player}-opponent", "name": "Opponent"},
            "rule": "renju", "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    body = json.dumps({"type": "game.created", "game_id": f"seat-{number}", "seq": 1, "at": iso(start - 60_000),
                       "data": data}).encode()  # fmt: skip
    headers = signed_headers(secret, f"msg_seat_{number}", int(time.time()), body)
    async with http.post(f"{base}/api/v1/webhooks/bench", data=body, headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"seating {player}: {response.status} {await response.text()}")


async def play(played: Played, clip: Path, base: str, link: str, found: Callable[[], list[tuple[str, float]]]) -> None:
    """One browser opens the player's page with the clip as its camera, streams it to its end, and closes."""
    spec = played.spec
    async with async_playwright() as playwright:
        browser = await launch(
            playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={clip}", f"--unsafely-treat-insecure-origin-as-secure={base}",
        )  # fmt: skip
        try:
            page = await browser.new_page()
            await page.goto(base + link)
            await page.check("#agree")
            started = played.started = time.time()
            await page.click("#start")
            connected = "() => document.getElementById('status').dataset.state === 'connected'"
            await page.wait_for_function(connected, timeout=20_000)
            played.connected_after_s = time.time() - started
            await asyncio.sleep(max(0.0, started + spec.seconds - time.time()))
        finally:
            await browser.close()
    await asyncio.sleep(GRACE_S)
    played.raised = [Raised(check, at - started) for check, at in found() if at - started <= spec.seconds + GRACE_S]


def tap(ingest: Any) -> tuple[dict[str, list[tuple[str, float]]], dict[int, list[tuple[float, Observation]]]]:
    """Record, as the service's ingest analyses the streams, each finding it raises (by player: its check and when)
    and each analysed frame's observation (by analyser: when, and what it showed)."""
    raised: dict[str, list[tuple[str, float]]] = {}
    seen: dict[int, list[tuple[float, Observation]]] = {}
    inner = ingest.on_finding

    def on_finding(stream: StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        if finding.ended is None:
            raised.setdefault(stream.player, []).append((finding.check.name, time.time()))
        inner(stream, finding, snapshot)

    ingest.on_finding = on_finding
    judge = FrameAnalyser.judge

    def judging(analyser: FrameAnalyser, observation: Observation) -> list[Finding]:
        seen.setdefault(id(analyser), []).append((time.time(), observation))
        return judge(analyser, observation)

    FrameAnalyser.judge = judging  # type: ignore[method-assign,assignment]  # the benchmark's own tap, for --trace
    return raised, seen


def print_trace(played: Played, observations: list[tuple[float, Observation]]) -> None:
    """What each analysed frame of a clip showed the service (as benchmarks/trace.py prints it offline)."""
    print(f"\n== {played.spec.name}: time from the camera's start, faces, people, new body, player seen, moving, "
          "background change, the background's and the person's exposure change (%), the background's and the "
          "person's sharpness, the background's structure")  # fmt: skip
    for wall, o in observations:
        seen = "-" if o.player_seen is None else "yn"[not o.player_seen]
        people = "-" if o.people is None else f"{o.people:.2f}"
        moving = "-" if o.moving is None else f"{o.moving:.2f}"
        change = "-" if o.background_change is None else f"{o.background_change:.2f}"
        gains = " ".join("-" if g is None else f"{100 * g:+.2f}" for g in (o.background_gain, o.person_gain))
        gains += " " + " ".join("-" if v is None else f"{v:.2f}" for v in (o.background_sharpness,
                                o.person_sharpness, o.background_structure))  # fmt: skip
        print(f"  {wall - played.started:6.1f} {len(o.faces)} {people:>5} {o.new_body:5.2f} {seen} {moving:>5} "
              f"{change:>5} {gains}{' BENT' if o.bent_down else ''}")  # fmt: skip


async def run(specs: list[ClipSpec], browsers: int, models: Path, cache: Path | None, workdir: Path,
              verbose: bool, trace: list[str]) -> list[Played]:  # fmt: skip
    paths = ensure_media(cache)
    cutouts = make_cutouts(paths)
    clips = {}
    for spec in specs:
        clips[spec.name] = workdir / f"{spec.name}.y4m"
        write_y4m(spec, cutouts, paths, clips[spec.name])
    database = f"sqlite:///{workdir / 'proctor.db'}"
    secret = prepare_database(database, "bench", ("Bench", "chief", TOKEN))
    settings = Settings(database_url=database, host=ADDRESS, port=PORT, media_dir=str(workdir / "media"),
                        models_dir=str(models))  # fmt: skip
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, ADDRESS, PORT).start()
    base = f"http://{ADDRESS}:{PORT}"
    try:
        ingest = app[CONTEXT].camera.ingest
        if ingest is None:
            raise RuntimeError("the service has no camera ingest")
        raised, seen = tap(ingest)
        slots = asyncio.Semaphore(browsers)
        outcomes = [Played(spec) for spec in specs]
        async with ClientSession() as http:
            links = {}
            for number, spec in enumerate(specs):
                player = f"bench-{number}"
                await seat(http, base, secret, player, number)
                async with http.post(f"{base}/api/v1/players/{player}/stream-token",
                                     headers={"Authorization": f"Bearer {TOKEN}"}) as response:  # fmt: skip
                    links[spec.name] = (player, (await response.json())["url"])

            async def one(played: Played) -> None:
                player, link = links[played.spec.name]
                async with slots:
                    try:
                        await play(played, clips[played.spec.name], base, link, lambda: raised.get(player, []))
                    except Exception as error:  # a clip that failed is reported, the others go on
                        played.error = f"{type(error).__name__}: {error}"
                session = ingest.sessions.get(StreamKey(player))
                played.frames_analysed = session.frames_analysed if session is not None else 0
                if session is not None and trace and any(part in played.spec.name for part in trace):
                    print_trace(played, seen.get(id(session.analyser), []))
                if verbose:
                    found = ", ".join(f"{r.check.lower()}@{r.at:.1f}" for r in played.raised) or "nothing"
                    failure = f"  ERROR {played.error}" if played.error else ""
                    print(f"  {played.spec.name:<36} connected after {played.connected_after_s or 0:.1f} s, "
                          f"raised: {found}{failure}", flush=True)  # fmt: skip

            await asyncio.gather(*(one(played) for played in outcomes))
    finally:
        await runner.cleanup()
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated parts of clip names")
    parser.add_argument("--browsers", type=int, default=2, help="clips streamed at once (one browser each)")
    parser.add_argument("--models", type=Path, default=ROOT / "models", help="the models folder")
    parser.add_argument("--cache", type=Path, default=None, help=f"media cache (default {default_cache()})")
    parser.add_argument("--verbose", action="store_true", help="a line per clip")
    parser.add_argument("--trace", default="", help="comma-separated parts of clip names: a line per analysed frame")
    args = parser.parse_args()
    if os.environ.get(INSIDE) != "1":
        if not CHROMIUM.exists():
            sys.exit("needs Debian's chromium at /usr/bin/chromium")
        ensure_media(args.cache)  # fetched here: the private network namespace below has no network
        command = ["unshare", "-n", sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]]
        sys.exit(subprocess.run(command, env={**os.environ, INSIDE: "1"}, check=False).returncode)
    private_network()
    only = [part for part in args.only.split(",") if part]
    specs = [s for s in browser_scenarios() if not only or any(part in s.name for part in only)]
    began = time.time()
    with tempfile.TemporaryDirectory(prefix="proctor-browser-") as folder:
        trace = [part for part in args.trace.split(",") if part]
        outcomes = asyncio.run(run(specs, args.browsers, args.models, args.cache, Path(folder), args.verbose, trace))
    labelled: list[tuple[ClipLabels, list[Raised]]] = [(labels_for(o.spec), o.raised) for o in outcomes if not o.error]
    failed = [o for o in outcomes if o.error]
    connected = [o.connected_after_s for o in outcomes if o.connected_after_s is not None]
    rates = [o.frames_analysed / o.spec.seconds for o in outcomes if o.frames_analysed]
    print(f"\nChromium {CHROMIUM}, the player's page at 5 fps and 300 kbit/s; {len(outcomes)} clips, "
          f"{sum(o.spec.seconds for o in outcomes) / 60:.1f} min; connected after "
          f"{min(connected, default=0):.1f}-{max(connected, default=0):.1f} s; analysed "
          f"{min(rates, default=0):.2f}-{max(rates, default=0):.2f} frames a second per stream")  # fmt: skip
    for o in failed:
        print(f"  FAILED {o.spec.name}: {o.error}")
    table("Browser part (Chromium's own WebRTC and VP8, through the whole service)", labelled)
    print(f"\nelapsed {time.time() - began:.0f} s")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
