"""The arbiters' controls over a player's camera (36): messages and prompts on the player's own event stream, the
prompt's recording as evidence, leave of the area (36.4.1) across reconnections, and the setup's approval; a real
aiortc peer streams to the running app."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from aiohttp import ClientResponse
from aiortc import VideoStreamTrack
from av import VideoFrame
from sqlalchemy import delete, func, insert, select
from sqlmodel import col

from proctor.account_log import record_account
from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.audit import verify_audit
from proctor.context import CONTEXT
from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.models import Arbiter, AuditEntry, CameraAction, Incident, IncidentAction
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context, seat
from tests.proctor.test_camera import ScriptedCamera, connect
from tests.proctor.test_events import EXAMPLE as EVENT_EXAMPLE
from tests.video.frames import scene
from video.checks import Thresholds
from video.devices import StreamKey

pytestmark = pytest.mark.asyncio

ARBITER = {"Authorization": "Bearer ctl-token"}


def add_arbiter(settings: Settings) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Ctl", role="arbiter", token_hash=token_hash("ctl-token")))
        record_account(connection, "Ctl", "test", "added", 0)  # as proctor arbiter add does
    engine.dispose()


async def issue(platform: Platformer, player: str) -> str:
    response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=ARBITER)
    if response.status == 404:  # not in an event nor a game yet
        await seat(platform, player)
        response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=ARBITER)
    assert response.status == 201
    return str((await response.json())["token"])


def stored(settings: Settings) -> dict[str, int]:
    """How many rows each append-only table holds."""
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        counts = {
            model.__name__: connection.execute(select(func.count()).select_from(model)).scalar_one()
            for model in (AuditEntry, CameraAction, Incident, IncidentAction)
        }
    engine.dispose()
    return counts


def audit_entries(settings: Settings) -> list[tuple[str, str, dict[str, Any]]]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        rows = connection.execute(select(col(AuditEntry.actor), col(AuditEntry.action), col(AuditEntry.detail))).all()
    engine.dispose()
    # The rows' hashes (proctor.audit) are checked by tests/security/test_integrity_audit.py.
    return [(actor, action, {k: v for k, v in (detail or {}).items() if k != "rows"}) for actor, action, detail in rows]


class Page:
    """A player's page listening to its event stream."""

    def __init__(self, response: ClientResponse) -> None:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/event-stream")
        self.response = response
        self.kind = ""

    async def next(self, timeout: float = 5.0) -> tuple[str, dict[str, Any]]:
        async with asyncio.timeout(timeout):
            while True:
                line = (await self.response.content.readline()).decode().rstrip("\n")
                if line.startswith("event: "):
                    self.kind = line[7:]
                elif line.startswith("data: "):
                    return self.kind, json.loads(line[6:])

    async def quiet(self, seconds: float) -> bool:
        """True if nothing came for ``seconds``."""
        try:
            await self.next(seconds)
        except TimeoutError:
            return True
        return False


async def open_page(platform: Platformer, token: str) -> tuple[Page, dict[str, Any]]:
    page = Page(await platform.client.get(f"/api/v1/play/{token}/events"))
    kind, state = await page.next()
    assert kind == "state"
    return page, state


class SwayingFace(VideoStreamTrack):
    """One person whose face moves left and right across the picture, 10 frames a second, her head turned to the
    side she is on (the astronaut looks a little to the picture's left; her mirror image, to its right)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = time.monotonic()
        self.rng = np.random.default_rng(7)
        self.count = 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(0.1)
        shift = int(110 * math.sin(2 * math.pi * (time.monotonic() - self.started) / 2.5))
        picture = scene(1, self.rng)
        if shift > 0:
            picture = np.ascontiguousarray(picture[:, ::-1])
        frame = VideoFrame.from_ndarray(np.roll(picture, shift, axis=1), format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, 10)
        self.count += 1
        return frame


async def wait_for(condition: Any, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not await condition():
            await asyncio.sleep(0.1)


async def incidents(platform: Platformer) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = await (await platform.client.get("/api/v1/incidents", headers=ARBITER)).json()
    return result


async def test_a_message_reaches_its_players_page_and_no_other(platform: Platformer, settings: Settings) -> None:
    add_arbiter(settings)
    token = await issue(platform, "m-1")
    page, state = await open_page(platform, token)
    other, _ = await open_page(platform, await issue(platform, "m-2"))
    assert {k: v for k, v in state.items() if k != "player"} == {
        "request": None, "leave_until": None, "approval": None, "messages": [], "prompt": None,
        "video": {"width": 640, "height": 480, "frameRate": 5, "maxBitrate": 300_000, "watched": False},
        "devices": {"front": {"state": "not-connected", "since": None}}, "talk": False, "talk_feed": None}  # fmt: skip
    response = await platform.client.post("/api/v1/players/m-1/camera/messages", headers=ARBITER,
                                          json={"text": "Please keep your hands in view"})  # fmt: skip
    assert response.status == 201
    kind, message = await page.next()
    assert kind == "message" and message["text"] == "Please keep your hands in view"
    assert abs(message["at"] - time.time() * 1000) < 5000
    assert await other.quiet(1.0)
    raised = await platform.client.post("/api/v1/incidents", headers=ARBITER,
                                        json={"kind": "arbiter-call", "summary": "asked", "player": "m-1"})  # fmt: skip
    incident = (await raised.json())["id"]
    response = await platform.client.post("/api/v1/players/m-1/camera/messages", headers=ARBITER,
                                          json={"text": "I am coming to you", "incident": incident})  # fmt: skip
    assert response.status == 201 and (await page.next())[1]["text"] == "I am coming to you"
    (on_incident,) = [i for i in await incidents(platform) if i["id"] == incident]
    assert [(a["action"], a["arbiter"], a["note"]) for a in on_incident["actions"]] == [
        ("note", "Ctl", "message to the player: I am coming to you")]  # fmt: skip
    audited = [(actor, detail) for actor, action, detail in audit_entries(settings) if action == "camera.message"]
    assert len(audited) == 2 and audited[1] == ("Ctl (arbiter)", {
        "incident": incident, "text_sha256": hashlib.sha256(b"I am coming to you").hexdigest()})  # fmt: skip
    status = await (await platform.client.get("/api/v1/players/m-1/camera", headers=ARBITER)).json()
    assert [m["text"] for m in status["messages"]] == ["Please keep your hands in view", "I am coming to you"]
    assert status["connected"] is False and status["checks"]
    _, again = await open_page(platform, token)
    assert [m["text"] for m in again["messages"]][-1] == "I am coming to you"  # a reconnected page catches up


async def test_the_page_names_the_player_and_shows_the_answer_to_a_leave_request(
    platform: Platformer, settings: Settings
) -> None:
    """From the event's pairing: who, event, section, round, board, colour, opponent, the event's zone; a leave
    request with its reason, waiting, then refused (the incident dismissed), again refused (its case dismissed), then
    granted (leave of the area)."""
    add_arbiter(settings)
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EVENT_EXAMPLE, now=0)
    engine.dispose()
    page, state = await open_page(platform, await issue(platform, "youth-m-p3"))
    assert state["player"] == {
        "name": "Male Youth Player 3", "event": "2021 National Youth Gomoku Championships", "section": "Male Youth",
        "round": 1, "board": 1, "colour": "white", "opponent": {"name": "Male Youth Player 1"},
        "time_zone": "Asia/Shanghai",
    }  # fmt: skip
    assert state["request"] is None
    token = await (await platform.client.post("/api/v1/players/youth-m-p3/stream-token", headers=ARBITER)).json()
    page, _ = await open_page(platform, token["token"])
    asked = await platform.client.post(f"/api/v1/play/{token['token']}/requests",
                                       json={"kind": "leave", "note": "  toilet,\n please "})  # fmt: skip
    assert asked.status == 201
    incident = (await asked.json())["incident"]
    kind, body = await page.next()
    assert kind == "request" and body["request"] | {"at": 0} == {
        "incident": incident, "at": 0, "answer": "waiting", "until": None, "note": ""}  # fmt: skip
    (raised,) = [i for i in await incidents(platform) if i["id"] == incident]
    assert raised["summary"] == "youth-m-p3 asks to leave the competition area: toilet, please"
    dismissed = await platform.client.post(f"/api/v1/incidents/{incident}/actions", headers=ARBITER,
                                           json={"action": "dismiss", "note": "after this game"})  # fmt: skip
    assert dismissed.status == 201
    kind, body = await page.next()
    assert kind == "request" and (body["request"]["answer"], body["request"]["note"]) == ("refused", "after this game")
    too_long = await platform.client.post(f"/api/v1/play/{token['token']}/requests",
                                          json={"kind": "leave", "note": "x" * 201})  # fmt: skip
    assert too_long.status == 400
    await platform.client.post(f"/api/v1/play/{token['token']}/requests", json={"kind": "leave"})
    assert (await page.next())[1]["request"]["answer"] == "waiting"
    cases = await (await platform.client.get("/api/v1/cases?kind=leave-request", headers=ARBITER)).json()
    (case,) = [c for c in cases["cases"] if c["status"] == "open"]
    closed = await platform.client.post(f"/api/v1/cases/{case['id']}/actions", headers=ARBITER,
                                        json={"action": "dismiss", "reason": "wait for the break"})  # fmt: skip
    assert closed.status == 201
    kind, body = await page.next()
    assert kind == "request" and body["request"]["answer"] == "refused"
    assert body["request"]["note"] == "wait for the break"
    await platform.client.post(f"/api/v1/play/{token['token']}/requests", json={"kind": "leave"})
    assert (await page.next())[1]["request"]["answer"] == "waiting"
    granted = await platform.client.post("/api/v1/players/youth-m-p3/camera/leave", headers=ARBITER,
                                         json={"minutes": 3, "reason": "toilet"})  # fmt: skip
    until = (await granted.json())["until"]
    assert (await page.next())[0] == "leave"
    kind, body = await page.next()
    assert kind == "request" and (body["request"]["answer"], body["request"]["until"]) == ("granted", until)
    _, again = await open_page(platform, token["token"])
    assert again["request"]["answer"] == "granted"  # a reconnected page catches up


async def test_prompts_record_their_window_and_the_ear_check_keeps_two_stills(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    token = await issue(platform, "e-1")
    page, _ = await open_page(platform, token)
    other, _ = await open_page(platform, await issue(platform, "e-2"))
    pc = await connect(platform, token, SwayingFace())
    try:
        await wait_for(lambda: _analysed(context, "e-1", 2))
        setup = {"kind": "setup", "summary": "before round 1", "player": "e-1"}
        raised = await platform.client.post("/api/v1/incidents", headers=ARBITER, json=setup)
        given = (await raised.json())["id"]
        ear, scan = await asyncio.gather(
            platform.client.post("/api/v1/players/e-1/camera/prompts", headers=ARBITER,
                                 json={"kind": "ear-check", "seconds": 5}),
            platform.client.post("/api/v1/players/e-1/camera/prompts", headers=ARBITER,
                                 json={"kind": "room-scan", "seconds": 5, "incident": given}),
        )  # fmt: skip
        assert ear.status == 201 and scan.status == 201, await ear.text()
        ear_body, scan_body = await ear.json(), await scan.json()
        shown = {event["kind"]: (kind, event) for kind, event in [await page.next(), await page.next()]}
        assert shown["ear-check"][0] == "prompt" and "both ears can be seen" in shown["ear-check"][1]["instruction"]
        assert shown["room-scan"][1]["article"] == "36.4" and shown["room-scan"][1]["remaining_ms"] == 5000
        assert scan_body["incident"] == given and ear_body["incident"] != given
        assert await other.quiet(0.5)

        async def recorded() -> bool:
            status = await (await platform.client.get("/api/v1/players/e-1/camera", headers=ARBITER)).json()
            return all(p["recorded"] is not None for p in status["prompts"])

        await wait_for(recorded)
    finally:
        await pc.close()
    status = await (await platform.client.get("/api/v1/players/e-1/camera", headers=ARBITER)).json()
    by_kind = {p["kind"]: p for p in status["prompts"]}
    ear_check = {i["id"]: i for i in await incidents(platform)}[ear_body["incident"]]
    assert (ear_check["kind"], ear_check["article"], ear_check["source"]) == ("ear-check", "36.2", "arbiter:Ctl")
    evidence = [a["verdict"]["evidence"] for a in ear_check["actions"] if a["action"] == "evidence"]
    landmarks = context.camera.checks_note.startswith("faces: CenterFace")
    assert len(evidence) == (5 if landmarks else 3)  # the clip, two stills, and with landmarks an ear crop from each
    audited = {detail.get("media_sha256") for _, action, detail in audit_entries(settings)
               if action == "incident.evidence"}  # fmt: skip
    for item in evidence:
        data = (tmp_path / "media" / item["media"][0]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == item["sha256"] and item["sha256"] in audited
    recorded_ear = by_kind["ear-check"]["recorded"]
    assert recorded_ear["frames"] >= 10 and recorded_ear["clip"]["sha256"] == evidence[0]["sha256"]
    left, right = recorded_ear["stills"]
    assert (left["side"], right["side"]) == ("left", "right") and left["centre_x"] < right["centre_x"] - 50
    if landmarks:  # chosen by the head's turn; the ear crop is taken on the side away from the nose
        assert left["turn"] < 0 < right["turn"]
        for still in (left, right):
            crop = cv2.imdecode(np.frombuffer((tmp_path / "media" / still["ear"]["media"]).read_bytes(), np.uint8),
                                cv2.IMREAD_COLOR)  # fmt: skip
            assert crop is not None and 40 <= crop.shape[0] <= 120 and 20 <= crop.shape[1] <= 80
            assert still["ear"]["sha256"] in audited
    for still in (left, right):
        assert (tmp_path / "media" / still["media"]).read_bytes()[:2] == b"\xff\xd8"
    scan_incident = {i["id"]: i for i in await incidents(platform)}[given]
    assert [a["action"] for a in scan_incident["actions"]] == ["note", "evidence"]
    assert "stills" not in by_kind["room-scan"]["recorded"]


async def _analysed(context: Any, player: str, frames: int) -> bool:
    session = context.camera.ingest.sessions.get(StreamKey(player))
    return session is not None and session.frames_analysed >= frames


async def test_a_prompt_without_a_live_stream_is_refused_and_writes_nothing(
    platform: Platformer, settings: Settings
) -> None:
    add_arbiter(settings)
    page, _ = await open_page(platform, await issue(platform, "n-1"))
    before = stored(settings)
    response = await platform.client.post("/api/v1/players/n-1/camera/prompts", headers=ARBITER,
                                          json={"kind": "pan-check"})  # fmt: skip
    assert response.status == 409 and "no live camera stream" in (await response.json())["message"]
    assert stored(settings) == before and await page.quiet(0.5)


async def test_leave_keeps_the_left_area_check_quiet_across_a_reconnection(
    platform: Platformer, settings: Settings
) -> None:
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.ingest.settings.thresholds = Thresholds(absence_s=1.5, clear_s=1.0)
    away, control = await issue(platform, "l-1"), await issue(platform, "l-2")
    page, _ = await open_page(platform, away)
    first = await connect(platform, away, ScriptedCamera([(60, 0)]))
    other = await connect(platform, control, ScriptedCamera([(60, 0)]))
    response = await platform.client.post("/api/v1/players/l-1/camera/leave", headers=ARBITER,
                                          json={"minutes": 5, "reason": "toilet break"})  # fmt: skip
    assert response.status == 201
    until = (await response.json())["until"]
    assert await page.next() == ("leave", {"until": until, "minutes": 5})
    try:

        async def left_area(player: str) -> bool:
            return (StreamKey(player), "left-area") in context.camera.open_incidents

        await wait_for(lambda: left_area("l-2"))  # the control, without leave, is flagged
        await wait_for(lambda: _analysed(context, "l-1", 8))  # 4 s of nobody, past the 1.5 s threshold
        assert not await left_area("l-1")
        await first.close()
        second = await connect(platform, away, ScriptedCamera([(60, 0)]))  # a new stream session
        try:
            assert context.camera.ingest.sessions[StreamKey("l-1")].monitor.leave_granted_until == until / 1000
            await wait_for(lambda: _analysed(context, "l-1", 8))
            assert not await left_area("l-1")
        finally:
            await second.close()
    finally:
        await first.close()
        await other.close()
    kinds = [(i["kind"], i["article"]) for i in await incidents(platform)]
    assert kinds.count(("left-area", "36.4.1")) == 1
    status = await (await platform.client.get("/api/v1/players/l-1/camera", headers=ARBITER)).json()
    assert status["leave_granted_until"] == until and status["findings"] == []
    control_status = await (await platform.client.get("/api/v1/players/l-2/camera", headers=ARBITER)).json()
    assert [(f["check"], f["article"]) for f in control_status["findings"]] == [("left-area", "36.4.1")]
    assert control_status["frames"]["analysed"] >= 3 and control_status["since"] is not None


async def test_the_setup_approval_is_stored_and_read_back_after_a_restart(
    platform: Platformer, settings: Settings, aiohttp_client: Any
) -> None:
    add_arbiter(settings)
    page, _ = await open_page(platform, await issue(platform, "a-1"))
    refused = await platform.client.post("/api/v1/players/a-1/camera/approval", headers=ARBITER,
                                         json={"approved": False, "note": "show the floor under the desk"})  # fmt: skip
    assert refused.status == 201
    kind, shown = await page.next()
    assert kind == "approval" and (shown["approved"], shown["note"]) == (False, "show the floor under the desk")
    approved = await platform.client.post("/api/v1/players/a-1/camera/approval", headers=ARBITER,
                                          json={"approved": True})  # fmt: skip
    assert approved.status == 201
    leave = await platform.client.post("/api/v1/players/a-1/camera/leave", headers=ARBITER,
                                       json={"minutes": 10, "reason": "doctor's call"})  # fmt: skip
    until = (await leave.json())["until"]
    status = await (await platform.client.get("/api/v1/players/a-1/camera", headers=ARBITER)).json()
    assert {k: status["approval"][k] for k in ("approved", "note", "by", "role")} == {
        "approved": True, "note": "", "by": "Ctl", "role": "arbiter"}  # fmt: skip
    page.response.close()
    await platform.client.close()
    restarted = await aiohttp_client(create_app(settings))  # the same database, a new process's state
    status = await (await restarted.get("/api/v1/players/a-1/camera", headers=ARBITER)).json()
    assert status["approval"]["approved"] is True and status["approval"]["by"] == "Ctl"
    assert status["leave_granted_until"] == until
    assert restarted.app is not None
    camera = restarted.app[CONTEXT].camera
    assert camera.ingest.leave_until["a-1"] == until / 1000
    audited = [action for _, action, _ in audit_entries(settings) if action.startswith("camera.")]
    assert audited == ["camera.approval", "camera.approval", "camera.leave"]


async def test_only_arbiters_may_and_bad_input_changes_nothing(platform: Platformer, settings: Settings) -> None:
    add_arbiter(settings)
    token = await issue(platform, "b-1")
    await issue(platform, "b-2")
    page, _ = await open_page(platform, token)
    raised = await platform.client.post("/api/v1/incidents", headers=ARBITER,
                                        json={"kind": "arbiter-call", "summary": "other", "player": "b-2"})  # fmt: skip
    others = (await raised.json())["id"]
    before = stored(settings)
    base = "/api/v1/players/b-1/camera"
    good = {"messages": {"text": "hello"}, "prompts": {"kind": "ear-check"},
            "leave": {"minutes": 5, "reason": "break"}, "approval": {"approved": True}}  # fmt: skip
    for route, body in good.items():
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
            response = await platform.client.post(f"{base}/{route}", json=body, headers=headers)
            assert response.status == 401, route
    assert (await platform.client.get(base)).status == 401
    refused = [
        ("messages", {"text": ""}, 400), ("messages", {"text": "   "}, 400), ("messages", {"text": "x" * 501}, 400),
        ("messages", {"text": 5}, 400), ("messages", {}, 400),
        ("messages", {"text": "hi", "incident": 999}, 404), ("messages", {"text": "hi", "incident": "1"}, 400),
        ("messages", {"text": "hi", "incident": True}, 400), ("messages", {"text": "hi", "incident": others}, 400),
        ("prompts", {"kind": "nose-check"}, 400), ("prompts", {}, 400),
        ("prompts", {"kind": "ear-check", "seconds": 4}, 400),
        ("prompts", {"kind": "ear-check", "seconds": 61}, 400), ("prompts", {"kind": "ear-check", "seconds": "9"}, 400),
        ("leave", {"minutes": 0, "reason": "x"}, 400), ("leave", {"minutes": 61, "reason": "x"}, 400),
        ("leave", {"minutes": 1.5, "reason": "x"}, 400), ("leave", {"minutes": True, "reason": "x"}, 400),
        ("leave", {"minutes": 5}, 400), ("leave", {"minutes": 5, "reason": "x", "incident": 999}, 404),
        ("approval", {"approved": "yes"}, 400), ("approval", {"approved": False}, 400),
        ("approval", {"approved": True, "note": "y" * 501}, 400),
    ]  # fmt: skip
    for route, body, status in refused:
        response = await platform.client.post(f"{base}/{route}", json=body, headers=ARBITER)
        assert response.status == status, (route, body, await response.text())
        assert (await response.json())["message"]
    response = await platform.client.post(f"{base}/messages", data=b"not json", headers=ARBITER)
    assert response.status == 400
    for route, body in good.items():
        response = await platform.client.post(f"/api/v1/players/nobody/camera/{route}", json=body, headers=ARBITER)
        assert response.status == 404, route
    assert (await platform.client.get("/api/v1/players/nobody/camera", headers=ARBITER)).status == 404
    assert (await platform.client.get("/api/v1/play/nope/events")).status == 404
    assert stored(settings) == before and await page.quiet(0.5)


async def test_the_pan_check_says_whether_the_background_moved_with_the_camera(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    token = await issue(platform, "p-1")
    pc = await connect(platform, token, SwayingFace())  # the whole picture slides: the camera pans over the room
    try:
        await wait_for(lambda: _analysed(context, "p-1", 2))
        response = await platform.client.post("/api/v1/players/p-1/camera/prompts", headers=ARBITER,
                                              json={"kind": "pan-check", "seconds": 5})  # fmt: skip
        assert response.status == 201
        incident = (await response.json())["incident"]

        async def recorded() -> bool:
            status = await (await platform.client.get("/api/v1/players/p-1/camera", headers=ARBITER)).json()
            return all(p["recorded"] is not None for p in status["prompts"])

        await wait_for(recorded)
    finally:
        await pc.close()
    status = await (await platform.client.get("/api/v1/players/p-1/camera", headers=ARBITER)).json()
    pan = status["prompts"][0]["recorded"]["pan"]
    assert pan["outcome"] == "background-moved" and pan["face_travel"] > 0.2 and pan["background_change"] > 2
    raised = {i["id"]: i for i in await incidents(platform)}[incident]
    assert (raised["kind"], raised["article"]) == ("pan-check", "36.4")
    notes = [a["note"] for a in raised["actions"] if a["action"] == "note"]
    assert any("the background moved with the camera" in note for note in notes), notes
    assert any(detail.get("pan") == "background-moved" for _, _, detail in audit_entries(settings))


async def test_the_audit_check_counts_camera_actions_against_their_entries(
    platform: Platformer, settings: Settings
) -> None:
    add_arbiter(settings)
    await issue(platform, "v-1")
    for text in ("one", "two"):
        response = await platform.client.post("/api/v1/players/v-1/camera/messages", headers=ARBITER,
                                              json={"text": text})  # fmt: skip
        assert response.status == 201
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        assert verify_audit(connection).ok
        last = connection.execute(select(func.max(AuditEntry.id))).scalar_one()
        connection.execute(delete(AuditEntry).where(col(AuditEntry.id) == last))  # the last entry only: no gap
        problems = verify_audit(connection).problems
    engine.dispose()
    assert problems == (
        "2 camera actions are stored but 1 are in the audit log",
        "camera_action 2: not in the audit log (written outside the service)",  # its hash went with the entry
    )
