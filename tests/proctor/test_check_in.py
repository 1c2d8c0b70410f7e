"""Check-in (24.1.1: players complete registration and check-in within the prescribed time limits, otherwise they may
not take part) through the API: a player is checked in for the round by the camera setup once their camera streams
(a real aiortc peer), the room scan and the ear check are recorded and the arbiter approves the setup after them; the
list names who is missing and why; a check-in by hand and its undoing, each by the roles that may, sealed and
audited; bad input changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.check_ins import Action, How, Missing, Record, SetupStep, Window, standing
from proctor.database import create_database_engine, migrate
from proctor.events import load_event_file
from proctor.models import Arbiter, AuditEntry, CheckIn
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.proctor.conftest import Platformer, app_context, iso
from tests.proctor.test_arbiters import act, add_arbiter, bearer
from tests.proctor.test_camera import connect
from tests.proctor.test_camera_controls import SwayingFace, _analysed, wait_for

EVENT = """
[event]
slug = "ci"
name = "Check-in Cup"
time_zone = "Asia/Shanghai"

[[sections]]
slug = "open"
name = "Open"
rule = "renju"
time_control = "rapid-15"
system = "swiss"
rounds = 3
tiebreaks = "PTS"

[sections.policy]
checks = ["virtual-background", "earphones", "absence", "extra-person", "devices", "camera"]
{players}
[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
platform_game_id = "ci-r1-b1"

[[sections.pairings]]
round = 1
board = 2
black = 3
white = 4

[[sections.pairings]]
round = 1
board = 3
black = 5

[[sections.pairings]]
round = 2
board = 1
black = 2
white = 3

[[sections.pairings]]
round = 2
board = 2
black = 4
white = 5

[[sections.pairings]]
round = 2
board = 3
black = 1

[[sections]]
slug = "quiet"
name = "No earphone check"
rule = "renju"
time_control = "rapid-15"
system = "swiss"
rounds = 1
tiebreaks = "PTS"

[sections.policy]
checks = ["absence", "camera"]

[[sections.players]]
start_no = 1
name = "Quiet One"
platform_ref = "q-1"

[[sections.players]]
start_no = 2
name = "Quiet Two"
platform_ref = "q-2"

[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
"""
PLAYERS = "".join(
    f'\n[[sections.players]]\nstart_no = {n}\nname = "Player {n}"\n' + (f'platform_ref = "ci-p{n}"\n' if n != 4 else "")
    for n in range(1, 6)
)  # player 4 has no platform id
BASE = "/api/v1/events/ci/sections/open/check-in"


def load(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "ci.toml"
    path.write_text(EVENT.replace("{players}", PLAYERS), encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def check_in_list(platform: Platformer, token: str, query: str = "", base: str = BASE) -> dict[str, Any]:
    response = await platform.client.get(base + query, headers=bearer(token))
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


def by_start(body: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {player["start_no"]: player for player in body["players"]}


async def approve(platform: Platformer, token: str, player: str, approved: bool = True, note: str = "") -> Any:
    response = await platform.client.post(f"/api/v1/players/{player}/camera/approval", headers=bearer(token),
                                          json={"approved": approved, "note": note})  # fmt: skip
    assert response.status == 201, await response.text()
    return await response.json()


async def issue(platform: Platformer, token: str, player: str) -> str:
    response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=bearer(token))
    assert response.status == 201, await response.text()
    return str((await response.json())["token"])


def stored(settings: Settings) -> tuple[int, int]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        checks, entries = (connection.execute(select(func.count()).select_from(m)).scalar_one()
                           for m in (CheckIn, AuditEntry))  # fmt: skip
    engine.dispose()
    return checks, entries


def audit_problems(settings: Settings) -> tuple[str, ...]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        report = verify_audit(connection)
    engine.dispose()
    return report.problems


def audited(settings: Settings, prefix: str) -> list[tuple[str, str, dict[str, Any]]]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        rows = connection.execute(select(col(AuditEntry.actor), col(AuditEntry.action), col(AuditEntry.detail))).all()
    engine.dispose()
    return [(actor, action, {k: v for k, v in (detail or {}).items() if k != "rows"})
            for actor, action, detail in rows if action.startswith(prefix)]  # fmt: skip


@pytest.mark.asyncio
async def test_24_1_1_a_player_is_checked_in_once_streaming_with_room_scan_and_ear_check_approved(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    """The real path: a stream link, a real peer streaming a face that turns left and right, the arbiter's room scan
    and ear check prompts recorded, and the approval after them; an approval before them does not count."""
    load(settings, tmp_path)
    li, chief = add_arbiter(settings, "Li", "arbiter"), add_arbiter(settings, "Chief", "chief")
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    pc = await connect(platform, await issue(platform, li, "ci-p1"), SwayingFace())
    try:
        await wait_for(lambda: _analysed(context, "ci-p1", 2))
        first = by_start(await check_in_list(platform, li))[1]
        assert (first["checked_in"], first["board"], first["colour"]) == (False, 1, "black")
        assert first["missing"] == ["room-scan-not-done", "ear-check-not-done", "setup-not-approved"]
        early = await approve(platform, li, "ci-p1")  # the camera streams, but nothing was checked yet
        assert early["streaming"] is True
        assert by_start(await check_in_list(platform, li))[1]["missing"] == [
            "room-scan-not-done", "ear-check-not-done", "approved-before-checks"]  # fmt: skip
        prompts = await asyncio.gather(*(
            platform.client.post("/api/v1/players/ci-p1/camera/prompts", headers=bearer(li),
                                 json={"kind": kind, "seconds": 5}) for kind in ("room-scan", "ear-check")
        ))  # fmt: skip
        assert [p.status for p in prompts] == [201, 201]

        async def recorded() -> bool:
            missing: list[str] = by_start(await check_in_list(platform, li))[1]["missing"]
            return missing == ["approved-before-checks"]

        await wait_for(recorded, timeout=20)
        assert by_start(await check_in_list(platform, li))[1]["checked_in"] is False
        approval = await approve(platform, li, "ci-p1", note="desk and floor clear, both ears seen")
    finally:
        await pc.close()
    body = await check_in_list(platform, li)
    assert (body["round"], body["rounds"], body["article"], body["ear_check"]) == (1, 3, "24.1.1", True)
    first = by_start(body)[1]
    assert first["checked_in"] is True and first["missing"] == []
    assert first["check_in"] == {"how": "camera", "at": approval["at"], "by": "Li", "role": "arbiter",
                                 "reason": "desk and floor clear, both ears seen", "after_start": False}  # fmt: skip
    assert first["approval"] | {"at": 0} == {"approved": True, "streaming": True, "by": "Li", "at": 0,
                                             "note": "desk and floor clear, both ears seen"}  # fmt: skip
    assert body["counts"] == {"checked_in": 1, "not_checked_in": 3}  # players 1-4 (5 has a bye)
    await wait_for(lambda: _stream_ended(context, "ci-p1"))
    assert by_start(await check_in_list(platform, li))[1]["checked_in"] is True  # the check-in stands
    status, body = await act(platform, li, BASE, {"round": 1, "start_no": 1, "reason": "on the platform's list"})
    assert status == 409 and "already checked in for round 1, by the camera setup approved by Li" in body["message"]
    assert body["message_words"]["zh"] == "该棋手已通过摄像头环境检查报到（第 1 轮，第 24.1.1 条）"

    # The chief undoes it: the camera setup counts again only with a new approval, while it streams.
    status, undone = await act(platform, chief, BASE, {"action": "undo", "round": 1, "start_no": 1,
                                                       "reason": "the room scan missed the second screen"})  # fmt: skip
    assert status == 201, undone
    assert (undone["checked_in"], undone["undone"]["by"]) == (False, "Chief")
    assert undone["missing"] == ["camera-not-connected", "room-scan-not-done", "ear-check-not-done",
                                 "setup-not-approved"]  # fmt: skip
    again = await approve(platform, li, "ci-p1")
    assert again["streaming"] is False
    assert "approved-without-camera" in by_start(await check_in_list(platform, li))[1]["missing"]
    assert [action for _, action, _ in audited(settings, "player.")] == ["player.check-in-undone"]
    assert audit_problems(settings) == ()


async def _stream_ended(context: Any, player: str) -> bool:
    return bool(context.camera.ingest.live(player) is None)


@pytest.mark.asyncio
async def test_24_1_1_the_list_names_who_is_missing_and_why(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path)
    li, chief = add_arbiter(settings, "Li", "arbiter"), add_arbiter(settings, "Chief", "chief")
    start = now_ms() + 3_600_000
    status, _ = await platform.send("game.created", "ci-r1-b1", {
        "black": {"id": "ci-p1", "name": "Player 1"}, "white": {"id": "ci-p2", "name": "Player 2"},
        "rule": "renju", "time_control": "rapid-15", "start_at": iso(start)}, at=start - 60_000)  # fmt: skip
    assert status == 200
    await issue(platform, li, "ci-p2")
    await approve(platform, li, "ci-p2")  # no camera streaming: it does not count
    await issue(platform, li, "ci-p3")
    await approve(platform, li, "ci-p3", approved=False, note="show the floor under the desk")

    body = await check_in_list(platform, li)  # the first round not started, by default
    assert (body["round"], body["starts"], body["started"], body["time_zone"]) == (1, start, False, "Asia/Shanghai")
    players = by_start(body)
    assert [(p["start_no"], p["board"], p["colour"]) for p in body["players"]] == [
        (1, 1, "black"), (2, 1, "white"), (3, 2, "black"), (4, 2, "white")]  # fmt: skip
    assert 5 not in players  # a bye: no game to check in for
    assert players[1]["missing"] == ["camera-not-connected", "room-scan-not-done", "ear-check-not-done",
                                     "setup-not-approved"]  # fmt: skip
    assert players[2]["missing"] == ["camera-not-connected", "room-scan-not-done", "ear-check-not-done",
                                     "approved-without-camera"]  # fmt: skip
    assert players[3]["missing"][-1] == "setup-refused"
    assert players[3]["approval"]["note"] == "show the floor under the desk"
    assert players[4]["missing"] == ["no-platform-id"] and players[4]["player"] is None
    assert all(p["checked_in"] is False and p["check_in"] is None for p in body["players"])
    assert body["counts"] == {"checked_in": 0, "not_checked_in": 4}

    status, _ = await act(platform, chief, "/api/v1/events/ci/sections/open/withdrawals",
                          {"start_no": 5, "after_round": 1, "reason": "ill, with the doctor's note"})  # fmt: skip
    assert status == 201
    second = await check_in_list(platform, li, "?round=2")
    assert [(p["start_no"], p["board"]) for p in second["players"]] == [(2, 1), (3, 1), (4, 2)]  # 5 withdrew (24.4)
    assert second["starts"] is None and second["opens"] == start  # round 1's start opens round 2's window

    quiet = await check_in_list(platform, li, base="/api/v1/events/ci/sections/quiet/check-in")
    assert quiet["ear_check"] is False
    assert by_start(quiet)[1]["missing"] == ["camera-not-connected", "room-scan-not-done", "setup-not-approved"]


@pytest.mark.asyncio
async def test_24_1_1_a_check_in_by_hand_and_its_undoing_follow_the_roles(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path)
    li, deputy = add_arbiter(settings, "Li", "arbiter"), add_arbiter(settings, "Deputy", "deputy-chief")
    committee = add_arbiter(settings, "Committee", "committee")
    appeals = add_arbiter(settings, "Appeals Chair", "appeals-committee")
    reviewer = add_arbiter(settings, "Reviewer", "reviewer")
    reason = "checked in on the platform at 08:40 (its check-in list)"

    status, body = await act(platform, appeals, BASE, {"round": 1, "start_no": 4, "reason": reason})
    assert status == 403 and stored(settings)[0] == 0  # the appeals committee reads and decides appeals only
    status, body = await act(platform, reviewer, BASE, {"round": 1, "start_no": 4, "reason": reason})
    assert status == 403
    assert (await check_in_list(platform, appeals))["counts"]["checked_in"] == 0  # it may read

    status, body = await act(platform, li, BASE, {"round": 1, "start_no": 4, "reason": reason})
    assert status == 201, body
    assert (body["action"], body["name"], body["board"], body["article"]) == ("check-in", "Player 4", 2, "24.1.1")
    assert body["check_in"] | {"at": 0} == {"how": "manual", "at": 0, "by": "Li", "role": "arbiter", "reason": reason,
                                            "after_start": False}  # fmt: skip
    status, body = await act(platform, committee, BASE, {"round": 1, "start_no": 4, "reason": "again"})
    assert status == 409 and "already checked in for round 1, by hand by Li (24.1.1)" in body["message"]
    assert body["message_words"]["zh"] == "该棋手已由裁判手动报到（第 1 轮，第 24.1.1 条）"
    listed = by_start(await check_in_list(platform, li))[4]
    assert listed["checked_in"] is True and listed["check_in"]["how"] == "manual"

    for token in (li, committee, appeals):  # only the chief arbiter or a deputy chief undoes
        status, body = await act(platform, token, BASE, {"action": "undo", "round": 1, "start_no": 4, "reason": "x"})
        assert status == 403, body
    status, body = await act(platform, deputy, BASE, {"action": "undo", "round": 1, "start_no": 4,
                                                      "reason": "the platform's list was of round 2"})  # fmt: skip
    assert status == 201, body
    assert (body["checked_in"], body["undone"]["by"], body["missing"]) == (False, "Deputy", ["no-platform-id"])
    status, body = await act(platform, deputy, BASE, {"action": "undo", "round": 1, "start_no": 4, "reason": "x"})
    assert status == 409 and "is not checked in for round 1: there is nothing to undo" in body["message"]
    status, body = await act(platform, committee, BASE, {"round": 1, "start_no": 4, "reason": "telephoned at 08:50"})
    assert status == 201 and body["check_in"]["by"] == "Committee"  # the organising committee may check in by hand

    assert [(actor, action, detail) for actor, action, detail in audited(settings, "player.")] == [
        ("Li (arbiter)", "player.checked-in", {"event": "ci", "section": "open", "round": 1, "start_no": 4,
         "how": "manual", "article": "24.1.1", "reason_sha256": hashlib.sha256(reason.encode()).hexdigest()}),
        ("Deputy (deputy-chief)", "player.check-in-undone", {"event": "ci", "section": "open", "round": 1,
         "start_no": 4, "how": "manual", "article": "24.1.1",
         "reason_sha256": hashlib.sha256(b"the platform's list was of round 2").hexdigest()}),
        ("Committee (committee)", "player.checked-in", {"event": "ci", "section": "open", "round": 1, "start_no": 4,
         "how": "manual", "article": "24.1.1", "reason_sha256": hashlib.sha256(b"telephoned at 08:50").hexdigest()}),
    ]  # fmt: skip
    assert audit_problems(settings) == ()

    # An arbiter assigned to board 2 sees its players only and checks in nobody else (16).
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(update(Arbiter).where(col(Arbiter.name) == "Li").values(sections=["ci/open/2"]))
    engine.dispose()
    assert [p["start_no"] for p in (await check_in_list(platform, li))["players"]] == [3, 4]
    status, body = await act(platform, li, BASE, {"round": 1, "start_no": 1, "reason": reason})
    assert (status, body["article"]) == (403, "16")


@pytest.mark.asyncio
async def test_24_1_1_bad_input_is_a_400_and_changes_nothing(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path)
    chief = add_arbiter(settings, "Chief", "chief")
    before = stored(settings)
    good = {"round": 1, "start_no": 2, "reason": "on the platform's list"}
    refused: list[tuple[dict[str, Any], int]] = [
        ({**good, "reason": ""}, 400), ({**good, "reason": "   "}, 400), ({**good, "reason": "x" * 501}, 400),
        ({"round": 1, "start_no": 2}, 400), ({**good, "reason": 5}, 400), ({**good, "round": 0}, 400),
        ({**good, "round": 4}, 400), ({**good, "round": "1"}, 400), ({**good, "round": True}, 400),
        ({**good, "start_no": None}, 400), ({**good, "start_no": 2.0}, 400), ({**good, "action": "maybe"}, 400),
        ({**good, "round": 3}, 404), ({**good, "start_no": 9}, 404), ({**good, "start_no": 5}, 404),
    ]  # fmt: skip
    for body, status in refused:
        answer_status, answer = await act(platform, chief, BASE, body)
        assert answer_status == status, (body, answer)
        assert answer["message"]
    response = await platform.client.post(BASE, data=b"not json", headers=bearer(chief))
    assert response.status == 400
    status, _ = await act(platform, None, BASE, good)
    assert status == 401
    status, _ = await act(platform, chief, "/api/v1/events/ci/sections/nowhere/check-in", good)
    assert status == 404
    for query, status in (("?round=abc", 400), ("?round=0", 400), ("?round=4", 400), ("?round=3", 404)):
        response = await platform.client.get(BASE + query, headers=bearer(chief))
        assert response.status == status, query
    assert (await platform.client.get(BASE)).status == 401
    assert stored(settings) == before


def test_24_1_1_the_window_opens_at_the_previous_round_and_closes_at_the_start() -> None:
    """The fold alone: what counts is the setup between the previous round's start (or an undo) and this round's."""
    scan, ear = SetupStep(1, "room-scan", 1_000, True), SetupStep(2, "ear-check", 1_100, True)
    approval = SetupStep(3, "approval", 1_200, True, True, "Li", "arbiter", "ok")
    window = Window(opens_ms=500, starts_ms=2_000)
    held = standing([], [scan, ear, approval], window, streaming=False, ear_check=True)
    assert (held.how, held.at, held.by) == (How.CAMERA, 1_200, "Li")  # it stands though the camera dropped since
    assert standing([], [scan, approval], window, streaming=True, ear_check=False).how is How.CAMERA
    assert standing([], [scan, approval], window, streaming=True, ear_check=True).missing == (
        Missing.EAR_CHECK, Missing.APPROVED_BEFORE_CHECKS)  # fmt: skip
    earlier = Window(opens_ms=1_150, starts_ms=2_000)  # the scan and the ear check were for the previous round
    assert standing([], [scan, ear, approval], earlier, streaming=True, ear_check=True).missing == (
        Missing.ROOM_SCAN, Missing.EAR_CHECK, Missing.APPROVED_BEFORE_CHECKS)  # fmt: skip
    late = Window(opens_ms=0, starts_ms=1_150)  # the approval came after the round started
    assert standing([], [scan, ear, approval], late, streaming=True, ear_check=True).missing == (
        Missing.NOT_APPROVED,)  # fmt: skip
    refused = SetupStep(4, "approval", 1_300, False, True, "Li", "arbiter", "a second screen")
    assert standing([], [scan, ear, approval, refused], window, streaming=True, ear_check=True).missing == (
        Missing.REFUSED,)  # fmt: skip
    undo = Record(1, Action.UNDO, "wrong player", "Chief", "chief", 1_250)
    assert standing([undo], [scan, ear, approval], window, streaming=True, ear_check=True).missing == (
        Missing.ROOM_SCAN, Missing.EAR_CHECK, Missing.NOT_APPROVED)  # fmt: skip
    by_hand = Record(2, Action.CHECK_IN, "platform list", "Li", "arbiter", 1_260)
    held = standing([undo, by_hand], [], window, streaming=False, ear_check=True, has_platform_id=False)
    assert (held.how, held.reason, held.undone) == (How.MANUAL, "platform list", undo)
    assert standing([], [], window, streaming=False, ear_check=True, has_platform_id=False).missing == (
        Missing.NO_PLATFORM_ID,)  # fmt: skip
