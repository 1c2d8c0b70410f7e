"""Issue 13, acting with confidence: a penalty previewed before it is given (the ladder's step with its articles,
whether it loses the game, whether this arbiter may give it: 16), writing nothing; the case's penalty decided again on
the server (refused when the ladder moved since the preview, or a loss not confirmed); a leave request granted or
refused on its case, audited and within the assignment, and the player's page told."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from proctor.database import create_database_engine
from proctor.player_view import leave_answer
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.proctor.conftest import Platformer, app_context, reader
from tests.proctor.test_cases import CHEN, CHIEF, WANG, ZHAO, act, finding, get
from tests.security.test_integrity_assignments import arbiters, started


async def preview(
    platform: Platformer, game: int, body: Any, headers: dict[str, str] = CHIEF
) -> tuple[int, Any]:  # fmt: skip
    response = await platform.client.post(f"/api/v1/games/{game}/penalties/preview", json=body, headers=headers)
    return response.status, await response.json()


def counts(settings: Settings) -> tuple[int, int, int]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        found = tuple(
            int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in ("audit_entry", "incident_action", "case_action")
        )
    engine.dispose()
    return found  # type: ignore[return-value]


async def test_the_preview_says_the_ladders_step_and_who_may_give_it_and_writes_nothing(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    before = counts(settings)
    status, seen = await preview(platform, game, {"player": "youth-m-p1", "offence": "36.2"}, WANG)
    assert status == 200, seen
    assert (seen["penalty"], seen["articles"], seen["occurrence"], seen["loses_game"]) == (
        "warning", "36.2, 15.1", 1, False)  # fmt: skip
    assert seen["player"] == {"id": "youth-m-p1", "colour": "black", "name": seen["player"]["name"]}
    assert seen["offence"] == {"article": "36.2", "description": "earphones in or on the ears", "ladder": "ladder",
                               "set_by": "event"}  # fmt: skip
    assert (seen["allowed"], seen["refusal"], seen["role"]) == (True, None, "arbiter")
    assert seen["reason"] == "first 36.2 in this game: a warning (event setting)"
    # The event sets 36.4.3 to a loss: the chief may give it, an arbiter is told why not (16.3).
    status, seen = await preview(platform, game, {"player": "youth-m-p3", "offence": "36.4.3"}, WANG)
    assert (status, seen["penalty"], seen["loses_game"], seen["allowed"]) == (200, "loss", True, False)
    assert seen["loss"] == {"why": "loss", "articles": "36.4.3, 15.3, 19.1.4", "result_stands": False}
    assert seen["refusal"]["why"] == "authority" and seen["refusal"]["article"] == "16.3"
    assert "only be given by the chief arbiter" in seen["refusal"]["message"] and seen["may_give"] == ["chief"]
    status, seen = await preview(platform, game, {"player": "youth-m-p3", "offence": "36.4.3"})
    assert (status, seen["allowed"], seen["refusal"]) == (200, True, None)
    # Zhao is assigned board 2: his role may warn, his assignment may not reach board 1.
    status, seen = await preview(platform, game, {"player": "youth-m-p1", "offence": "17.2"}, ZHAO)
    assert (status, seen["allowed"], seen["refusal"]["why"], seen["refusal"]["article"]) == (
        200, False, "assignment", "16")  # fmt: skip
    assert counts(settings) == before  # nothing written


async def test_the_preview_follows_the_ladder_as_penalties_are_given(platform: Platformer, settings: Settings) -> None:
    """A warning, then a violation; the second violation loses the game (15.3, 18.14)."""
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    asked = {"player": "youth-m-p1", "offence": "17.2"}
    for expected, loses in (("warning", False), ("violation", False), ("violation", True)):
        status, seen = await preview(platform, game, asked)
        assert (status, seen["penalty"], seen["loses_game"]) == (200, expected, loses), seen
        response = await platform.client.post(
            f"/api/v1/games/{game}/actions", json={"action": "penalty", "reason": "seen", **asked}, headers=CHIEF
        )
        assert response.status == 200, await response.text()
    assert seen["loss"]["why"] == "two-violations" and seen["loss"]["articles"] == "15.3, 18.14"
    assert seen["violations_before"] == 1 and [p["penalty"] for p in seen["earlier"]] == ["warning", "violation"]
    status, seen = await preview(platform, game, asked, CHEN)
    assert status == 200 and seen["game_over"] is True and seen["occurrence"] == 4


async def test_bad_previews_get_a_4xx(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    for body in ({"offence": "36.2"}, {"player": "nobody", "offence": "36.2"}, {"player": "youth-m-p1"},
                 {"player": "youth-m-p1", "offence": "99.9"}, {"player": "youth-m-p1", "offence": 17},
                 {"player": "youth-m-p1", "offence": "36.2", "disqualify": "yes"}, ["36.2"]):  # fmt: skip
        status, answer = await preview(platform, game, body)
        assert status == 400, (body, answer)
        assert answer["error"] == "bad-request", answer
    response = await platform.client.post(f"/api/v1/games/{game}/penalties/preview", data=b"{", headers=CHIEF)
    assert response.status == 400
    status, _ = await preview(platform, 99_999, {"player": "youth-m-p1", "offence": "36.2"})
    assert status == 404
    response = await platform.client.post(f"/api/v1/games/{game}/penalties/preview", json={})
    assert response.status == 401
    status, _ = await preview(platform, game, {"player": "youth-m-p1", "offence": "36.2"}, reader(platform))
    assert status == 403  # the review panel reads only
    document = await (await platform.client.get("/api/openapi.json")).json()
    assert "post" in document["paths"]["/api/v1/games/{game}/penalties/preview"]


async def test_a_cases_penalty_is_decided_again_and_a_loss_needs_its_confirmation(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    case = (await get(platform, f"/api/v1/cases/{await _case(platform, game, 'youth-m-p1')}"))["id"]
    asked = {"action": "penalty", "offence": "17.2", "reason": "slid a stone"}
    status, answer = await act(platform, case, {**asked, "expect": {"penalty": "warning", "loses_game": False}}, WANG)
    assert (status, answer["status"], answer["verdict"]["penalty"]) == (201, "penalised", "warning"), answer
    assert answer["verdict"]["player"] == "youth-m-p1"  # the case's player by default
    assert (await get(platform, f"/api/v1/cases/{case}"))["actions"][-1]["action"] == "penalty"
    status, answer = await act(platform, case, asked)
    assert status == 409  # the case is closed: the next finding opens a new one
    # A second case: the ladder moved on (a violation now); what Wang previewed (a warning) is refused.
    case = await _case(platform, game, "youth-m-p1")
    status, answer = await act(platform, case, {**asked, "expect": {"penalty": "warning", "loses_game": False}}, CHEN)
    assert status == 409 and answer["preview"]["penalty"] == "violation" and "not the warning" in answer["message"]
    status, answer = await act(platform, case, {**asked, "expect": {"penalty": "violation", "loses_game": False}}, WANG)
    assert (status, answer["article"]) == (403, "16.2"), answer  # an arbiter may not give a violation
    status, answer = await act(platform, case, asked, CHEN)
    assert (status, answer["verdict"]["penalty"]) == (201, "violation"), answer
    # The third: a second violation, which loses the game: refused until confirmed.
    case = await _case(platform, game, "youth-m-p1")
    status, answer = await act(platform, case, asked, CHEN)
    assert status == 409 and answer["preview"]["loses_game"] is True and "confirm_loss" in answer["message"]
    state = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1")
    assert state["result"] is None
    status, answer = await act(platform, case, {**asked, "confirm_loss": True}, CHEN)
    assert status == 201 and answer["verdict"]["game_result"]["winner"] == "white", answer
    for bad in ({"offence": "99.9"}, {"player": "nobody"}, {"reason": ""}, {"confirm_loss": "yes"},
                {"expect": {"penalty": "scolding", "loses_game": False}}):  # fmt: skip
        case = await _case(platform, game, "youth-m-p3")
        status, answer = await act(platform, case, {**asked, "offence": "17.3", **bad})
        assert status == 400, (bad, answer)


async def _case(platform: Platformer, game: int, player: str) -> int:
    """A new finding about ``player``: the id of its case (the open one, else a new one)."""
    incident = await finding(platform, game, player, now_ms())
    for case in (await get(platform, f"/api/v1/cases?player={player}&status=open"))["cases"]:
        full = await get(platform, f"/api/v1/cases/{case['id']}")
        if incident in [o["incident"] for o in full["occurrences"]]:
            return int(case["id"])
    raise AssertionError("no open case holds the finding")


async def leave_request(platform: Platformer, game: int, player: str) -> int:
    context = app_context(platform)
    incident: int = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, "leave-request", f"{player} asks to leave the competition area: toilet",
            source="player", article="36.4.1", player_ref=player, at=now_ms(),
        )
    )  # fmt: skip
    cases = (await get(platform, f"/api/v1/cases?player={player}&kind=leave-request&status=open"))["cases"]
    assert len(cases) == 1 and cases[0]["kind"] == "leave-request"
    assert incident
    return int(cases[0]["id"])


def answered(platform: Platformer, player: str) -> dict[str, Any]:
    """What the player's page is told of their latest leave request."""
    with app_context(platform).engine.connect() as connection:
        said = leave_answer(connection, player)
    assert said is not None
    return said


async def test_a_leave_request_is_granted_or_refused_on_its_case(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    for player in ("youth-m-p1", "youth-m-p3"):
        response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=CHIEF)
        assert response.status == 201
    case = await leave_request(platform, game, "youth-m-p1")
    for bad in ({"minutes": 0}, {"minutes": 61}, {"minutes": "5"}, {"minutes": 5, "reason": ""}):
        status, answer = await act(platform, case, {"action": "grant-leave", "reason": "toilet", **bad})
        assert status == 400, (bad, answer)
    status, answer = await act(platform, case, {"action": "grant-leave", "minutes": 5, "reason": "toilet"}, ZHAO)
    assert status == 403, answer  # board 2's arbiter
    before = now_ms()
    status, answer = await act(platform, case, {"action": "grant-leave", "minutes": 5, "reason": "toilet"}, WANG)
    assert (status, answer["status"]) == (201, "granted"), answer
    assert before + 5 * 60_000 <= answer["until"] <= now_ms() + 5 * 60_000
    camera = await get(platform, "/api/v1/players/youth-m-p1/camera")
    assert camera["leave_granted_until"] == answer["until"]
    full = await get(platform, f"/api/v1/cases/{case}")
    assert full["status"] == "granted" and full["actions"][-1]["detail"]["minutes"] == 5
    assert answered(platform, "youth-m-p1")["answer"] == "granted"
    status, answer = await act(platform, case, {"action": "refuse", "reason": "too late"})
    assert status == 409  # answered already
    other = await leave_request(platform, game, "youth-m-p3")
    status, answer = await act(platform, other, {"action": "refuse", "reason": ""})
    assert status == 400
    status, answer = await act(platform, other, {"action": "refuse", "reason": "wait until the move is made"})
    assert (status, answer["status"]) == (201, "refused")
    said = answered(platform, "youth-m-p3")
    assert (said["answer"], said["note"]) == ("refused", "wait until the move is made")
    # Refusing and granting are for leave requests only.
    case = await _case(platform, game, "youth-m-p1")
    assert (await act(platform, case, {"action": "refuse", "reason": "no"}))[0] == 400
    assert (await act(platform, case, {"action": "grant-leave", "minutes": 5, "reason": "no"}))[0] == 400
    audited = create_database_engine(settings)
    with audited.connect() as connection:
        actions = set(connection.execute(text("SELECT action FROM audit_entry")).scalars())
    audited.dispose()
    assert {"case.grant-leave", "case.refuse", "camera.leave"} <= actions
