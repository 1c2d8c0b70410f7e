"""A real WebRTC path: an aiortc peer (the player's camera) streams to the app's ingest; the checks raise
incidents with their snapshot and its hash in the audit log."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import io
import os
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription, VideoStreamTrack
from av import VideoFrame
from sqlalchemy import insert, select
from sqlmodel import col

from proctor.account_log import record_account
from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.media_retention import expired_media
from proctor.models import Arbiter, AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context, seat
from tests.video.frames import scene
from video.checks import Thresholds
from video.devices import StreamKey
from video.ingest import ClipSettings

pytestmark = pytest.mark.asyncio


class ScriptedCamera(VideoStreamTrack):
    """Plays a script of (seconds, people in view) at 10 frames a second, with sensor noise."""

    def __init__(self, script: list[tuple[float, int]]) -> None:
        super().__init__()
        self.script = script
        self.started = time.monotonic()
        self.rng = np.random.default_rng(5)
        self.count = 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(0.1)
        elapsed = time.monotonic() - self.started
        people = next((n for until, n in self.script if elapsed < until), self.script[-1][1])
        frame = VideoFrame.from_ndarray(scene(people, self.rng), format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, 10)
        self.count += 1
        return frame


CAM = {"Authorization": "Bearer cam-token"}
"""The arbiter that issue_token adds."""


async def issue_token(platform: Platformer, settings: Settings, player: str) -> str:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Cam", role="arbiter", token_hash=token_hash("cam-token")))
        record_account(connection, "Cam", "test", "added", 0)  # as proctor arbiter add does
    engine.dispose()
    response = await platform.client.post(f"/api/v1/players/{player}/stream-token",
                                          headers={"Authorization": "Bearer cam-token"})  # fmt: skip
    if response.status == 404:  # not in an event nor a game yet
        await seat(platform, player)
        response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=CAM)
    assert response.status == 201
    body: dict[str, Any] = await response.json()
    assert body["url"] == f"/play/{body['token']}"
    return str(body["token"])


async def connect(platform: Platformer, token: str, track: VideoStreamTrack) -> RTCPeerConnection:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(track)
    await pc.setLocalDescription(await pc.createOffer())
    response = await platform.client.post("/api/v1/rtc/offer", json={
        "sdp": pc.localDescription.sdp, "type": "offer", "token": token})  # fmt: skip
    assert response.status == 200, await response.text()
    answer = await response.json()
    await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
    return pc


async def test_the_player_leaves_and_another_person_comes_in(platform: Platformer, settings: Settings,
                                                             tmp_path: Path) -> None:  # fmt: skip
    context = app_context(platform)
    context.camera.ingest.settings.thresholds = Thresholds(absence_s=1.5, extra_person_s=1.0, clear_s=1.0)
    context.camera.ingest.settings.clip = ClipSettings(before_s=3.0, after_s=1.0)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    start = int(time.time() * 1000) - 5_000
    await platform.create("cam1", start=start)
    for side in "bw":
        await platform.send("player.joined", "cam1", {"player": f"cam1-{side}"}, at=start - 10_000)
    token = await issue_token(platform, settings, "cam1-b")
    page = await platform.client.get(f"/play/{token}")
    assert page.status == 200 and "Camera check-in" in await page.text()
    pc = await connect(platform, token, ScriptedCamera([(2.5, 1), (5.5, 2), (60, 0)]))
    try:
        kinds: list[str] = []
        for _ in range(150):
            await asyncio.sleep(0.1)
            incidents = await (await platform.client.get("/api/v1/incidents", headers=CAM)).json()
            kinds = [i["kind"] for i in incidents]
            left_actions = [a["action"] for i in incidents if i["kind"] == "left-area" for a in i["actions"]]
            if "evidence" in left_actions:  # the clip comes after_s after the incident
                break
    finally:
        await pc.close()
    assert "extra-person" in kinds and "left-area" in kinds
    left = next(i for i in incidents if i["kind"] == "left-area")
    assert left["article"] == "36.4.1" and left["source"] == "detector:camera"
    assert left["game"] is not None and left["evidence"]["detail"] == "nobody in front of the camera"
    (name,) = left["evidence"]["media"]
    data = (tmp_path / "media" / name).read_bytes()
    assert data[:2] == b"\xff\xd8" and hashlib.sha256(data).hexdigest() == left["evidence"]["sha256"]
    clip_action = next(a for a in left["actions"] if a["action"] == "evidence")
    clip_evidence = clip_action["verdict"]["evidence"]
    clip = (tmp_path / "media" / clip_evidence["media"][0]).read_bytes()
    assert hashlib.sha256(clip).hexdigest() == clip_evidence["sha256"]
    with av.open(io.BytesIO(clip), "r") as container:  # a playable WebM of the seconds around the incident
        frames = [frame.to_ndarray(format="bgr24") for frame in container.decode(video=0)]
    assert 4 <= len(frames) <= 12 and frames[0].shape == (240, 320, 3)
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        audited = connection.execute(select(col(AuditEntry.action), col(AuditEntry.detail))).all()
    engine.dispose()
    hashes = {(action, (detail or {}).get("media_sha256")) for action, detail in audited}
    assert {("incident.raised", left["evidence"]["sha256"]), ("incident.evidence", clip_evidence["sha256"])} <= hashes
    session = context.camera.ingest.sessions[StreamKey("cam1-b")]
    # Drained and sampled: every frame taken off the track, only some analysed (a loaded machine sends fewer).
    assert session.frames_analysed >= 10 and session.frames_dropped > 0
    assert 0 < session.searches <= session.frames_analysed  # the models' runs, counted for the benchmarks


async def test_bad_offers_and_tokens_are_refused_and_allocate_nothing(platform: Platformer, settings: Settings) -> None:
    context = app_context(platform)
    token = await issue_token(platform, settings, "p-x")
    response = await platform.client.post("/api/v1/rtc/offer", json={"sdp": "v=0 nonsense", "type": "offer",
                                                                      "token": token})  # fmt: skip
    assert response.status == 400 and "offer cannot be used" in (await response.json())["message"]
    response = await platform.client.post("/api/v1/rtc/offer", json={"sdp": "x", "type": "offer", "token": "nope"})
    assert response.status == 404
    response = await platform.client.post("/api/v1/rtc/offer", json={"type": "offer", "token": token})
    assert response.status == 400
    assert context.camera.ingest.connections == {}
    assert (await platform.client.get("/play/nope")).status == 404
    reissued = await platform.client.post(
        "/api/v1/players/p-x/stream-token", headers={"Authorization": "Bearer cam-token"}
    )
    assert reissued.status == 201
    assert (await platform.client.get(f"/play/{token}")).status == 404  # the old link no longer works
    assert (await platform.client.get(f"/play/{(await reissued.json())['token']}")).status == 200


async def test_the_player_can_ask_to_leave_and_call_the_arbiter(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "p-y")
    for kind in ("leave", "call"):
        response = await platform.client.post(f"/api/v1/play/{token}/requests", json={"kind": kind})
        assert response.status == 201
    incidents = await (await platform.client.get("/api/v1/incidents", headers=CAM)).json()
    assert [(i["kind"], i["article"]) for i in incidents] == [("arbiter-call", None), ("leave-request", "36.4.1")]


async def test_turn_credentials_are_minted_per_player(platform: Platformer, settings: Settings) -> None:
    context = app_context(platform)
    context.settings = Settings(database_url=settings.database_url, ice_servers="turn:turn.example:3478",
                                turn_secret="s3cret")  # fmt: skip
    token = await issue_token(platform, settings, "p-z")
    config = await (await platform.client.get(f"/api/v1/rtc/config?token={token}")).json()
    (server,) = config["iceServers"]
    expiry, player = server["username"].split(":")
    assert player == "p-z" and int(expiry) > time.time()
    expected = base64.b64encode(hmac.new(b"s3cret", server["username"].encode(), hashlib.sha1).digest()).decode()
    assert server["credential"] == expected


async def test_media_past_retention_are_found_and_newer_media_left(tmp_path: Path) -> None:
    old, new = tmp_path / "old.jpg", tmp_path / "new.webm"
    old.write_bytes(b"x")
    new.write_bytes(b"y")
    now = time.time()
    os.utime(old, (now - 10 * 86_400, now - 10 * 86_400))
    (found,) = expired_media(tmp_path, 7 * 86_400, now)
    assert found.name == "old.jpg" and found.sha256 == hashlib.sha256(b"x").hexdigest()
    assert expired_media(tmp_path / "missing", 1, now) == []  # deleting them: tests/security/test_retention.py
