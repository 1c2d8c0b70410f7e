"""The microphone in the distributed mode (issues 15 and 16), every part a process of its own on this machine:
Debian's Janus and redis-server, the service (``proctor serve`` with ``JANUS_URL``) and two ``proctor worker``
processes.  A player of a section that requires the microphone publishes the front camera with an audio track (a WAV
made with espeak-ng, a voice giving advice in Mandarin, over and over) to Janus, as the page does.  The worker holding
the front camera listens: the voice is raised as a ``voice`` flag (36.4.2, 36.4.3) through the service, its WAV clip
kept in the section's sound folder; the worker killed, the other takes the stream over and raises the next advice,
without a false ``microphone-lost``.  A player of the same section whose page sends no audio is
``microphone-lost`` (36.4), raised by the worker holding their camera."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
import signal
import wave
from io import BytesIO
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
from aiortc.contrib.media import MediaPlayer
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import IncidentAction
from proctor.settings import Settings
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_microphone import EVENT, SmallPicture, advice, missing
from tests.proctor.test_worker_views import publishing
from tests.proctor.test_workers import CAM, holders, incidents, live_workers, seat_and_link, wait_for, with_workers
from tests.video.janus_server import JanusServer

pytestmark = pytest.mark.slow

TALKER, SILENT = "m-1", "m-3"
"""Players of the section that requires the microphone (tests.proctor.test_microphone.EVENT: muted or lost after
2 s)."""
WORKERS = ("a1", "a2")


def front_holder(bus_url: str) -> str | None:
    return holders(bus_url, (TALKER,))[TALKER]


def microphone_incidents(database_url: str, player: str, kind: str) -> list[Any]:
    return [i for i in incidents(database_url, player, kind) if i.source == "detector:microphone"]


def clips(database_url: str, incident_id: int) -> list[dict[str, Any]]:
    """The sound clips attached to an incident (its ``evidence`` actions' detail)."""
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        rows = connection.execute(select(IncidentAction).where(
            col(IncidentAction.incident_id) == incident_id, col(IncidentAction.action) == "evidence"
        )).all()  # fmt: skip
    engine.dispose()
    return [dict(row.verdict or {}).get("evidence", {}) for row in rows]


async def microphone_state(http: aiohttp.ClientSession, base: str, player: str) -> str:
    """The player's microphone as the desk shows it (from the report of the worker holding the front camera)."""
    for _ in range(50):  # the worker's report reaches the desk within a second or two
        async with http.get(f"{base}/api/v1/players/{player}/camera", headers=CAM) as response:
            state = str((await response.json())["devices"]["microphone"]["state"])
        if state != "not-connected":
            return state
        await asyncio.sleep(0.2)
    return state


async def scenario(database_url: str, port: int, bus_url: str, secret: str, workers: dict[str, Any],
                   speech: Path) -> dict[str, Any]:  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http, contextlib.AsyncExitStack() as stack:
        await wait_for(lambda: live_workers(bus_url) == len(WORKERS), 60, "both workers in the registry")
        talker = await seat_and_link(http, base, secret, TALKER)
        silent = await seat_and_link(http, base, secret, SILENT)
        player = MediaPlayer(str(speech), loop=True)
        assert player.audio is not None
        await stack.enter_async_context(publishing(http, base, talker, "front", SmallPicture(), player.audio))
        await stack.enter_async_context(publishing(http, base, silent, "front", SmallPicture()))
        await wait_for(lambda: front_holder(bus_url) is not None, 30, "the talker's front camera held by a worker")

        # The advice, heard by the worker holding the camera: a voice flag through the service, with its clip.
        await wait_for(lambda: microphone_incidents(database_url, TALKER, "voice"), 40, "the voice flag")
        first = microphone_incidents(database_url, TALKER, "voice")[0]
        await wait_for(lambda: clips(database_url, first.id), 30, "its sound clip attached")
        await wait_for(lambda: microphone_incidents(database_url, SILENT, "microphone-lost"), 30,
                       "the page without audio: microphone-lost")  # fmt: skip
        states = {player: await microphone_state(http, base, player) for player in (TALKER, SILENT)}

        # The worker killed: the other takes the stream over and hears the next advice.
        first_holder = front_holder(bus_url)
        assert first_holder is not None
        workers[first_holder].send_signal(signal.SIGKILL)
        await wait_for(lambda: front_holder(bus_url) not in (None, first_holder), 20, "the front camera taken over")
        taken = len(microphone_incidents(database_url, TALKER, "voice"))
        await wait_for(lambda: len(microphone_incidents(database_url, TALKER, "voice")) > taken, 40,
                       "the next advice raised by the new worker")  # fmt: skip
        await asyncio.sleep(3.0)  # what a false loss would need to be raised after the takeover
        return {"first": first_holder, "second": front_holder(bus_url), "states": states}


def test_the_worker_holding_a_front_camera_listens_to_its_microphone_and_the_one_that_takes_it_over(
    database_url: str, redis_server: RedisServer, janus_server: JanusServer, tmp_path: Path
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the workers reach the database through the service only: its other tests cover PostgreSQL")
    if shutil.which("espeak-ng") is None:
        missing("Debian's espeak-ng (.ci/run installs it)")
    speech = tmp_path / "advice.wav"
    advice(speech)
    seen = with_workers(database_url, janus_server, redis_server.url, tmp_path, WORKERS,
                        lambda port, secret, workers: scenario(database_url, port, redis_server.url, secret, workers,
                                                               speech), EVENT)  # fmt: skip
    assert seen["second"] not in (None, seen["first"])
    voices = microphone_incidents(database_url, TALKER, "voice")
    assert len(voices) >= 2 and all(v.article == "36.4.2, 36.4.3" for v in voices)
    # Each raised once, though a worker tells a finding until the service has it.
    assert len({v.created_ms for v in voices}) == len(voices)
    (clip,) = clips(database_url, voices[0].id)
    (name,) = clip["media"]
    assert name.startswith("mic-2026/kids/sound/") and name.endswith(".wav"), name
    data = (tmp_path / "media" / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == clip["sha256"]
    with wave.open(BytesIO(data)) as played:
        samples = np.frombuffer(played.readframes(played.getnframes()), dtype="<i2").astype(np.float32) / 32768
        assert played.getframerate() == 16_000 and len(samples) >= 8 * 16_000
    assert np.abs(samples).max() > 0.05  # the advice is in it
    # The talker's microphone was never taken for lost, not even across the takeover; the silent page's was.
    assert microphone_incidents(database_url, TALKER, "microphone-lost") == []
    (lost,) = microphone_incidents(database_url, SILENT, "microphone-lost")
    assert lost.article == "36.4"
    assert seen["states"] == {TALKER: "connected", SILENT: "lost"}, seen["states"]  # as the desk shows them
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in WORKERS}
    assert all("microphone checks: voice activity: Silero VAD" in text for text in logs.values()), logs
