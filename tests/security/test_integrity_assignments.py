"""Issue 12, item 5: an arbiter assigned to sections or boards changes only those (16); the chief and the deputy
chief act everywhere.  Game actions, incident actions and camera controls in another section are refused (403)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.models import Arbiter
from proctor.settings import Settings
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_events import EXAMPLE

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform
MEN = "national-youth-2021/youth-m"


def arbiters(settings: Settings) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
        for name, role, sections in (("Wang", "arbiter", [MEN]), ("Zhao", "arbiter", [f"{MEN}/2"]),
                                     ("Li", "chief", None), ("Chen", "deputy-chief", [MEN])):  # fmt: skip
            connection.execute(insert(Arbiter).values(
                name=f"{name}-{role}", role=role, token_hash=token_hash(name), sections=sections
            ))  # fmt: skip
    engine.dispose()


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}"}


async def started(platform: Platformer, game: str, black: str, white: str) -> int:
    start = int(time.time() * 1000) - 10_000
    data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
    status, created = await platform.send("game.created", game, data, at=start - 60_000)
    assert status == 200, created
    for player in (black, white):
        await platform.send("player.joined", game, {"player": player}, at=start - 30_000)
    return int(created["game"])


async def post(platform: Platformer, who: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    response = await platform.client.post(path, json=body, headers=bearer(who))
    return response.status, await response.json()


async def test_an_assigned_arbiter_changes_only_their_sections(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    men = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    women = await started(platform, "youth-f-r1-b1", "youth-f-p1", "youth-f-p3")

    status, answer = await post(platform, "Wang", f"/api/v1/games/{women}/actions", {"action": "pause", "reason": "x"})
    assert (status, answer["error"]) == (403, "forbidden") and "youth-f" in answer["message"], answer
    status, answer = await post(
        platform,
        "Wang",
        f"/api/v1/games/{women}/actions",
        {"action": "adjust", "player": "youth-f-p1", "delta_ms": -600_000, "reason": "x"},
    )
    assert status == 403, answer
    status, answer = await post(platform, "Zhao", f"/api/v1/games/{men}/actions", {"action": "pause", "reason": "x"})
    assert status == 403, answer  # assigned to board 2 of the section, not board 1
    status, answer = await post(platform, "Wang", f"/api/v1/games/{men}/actions", {"action": "pause", "reason": "x"})
    assert status == 200, answer
    status, answer = await post(platform, "Chen", f"/api/v1/games/{women}/actions", {"action": "pause", "reason": "x"})
    assert status == 200, answer  # a deputy chief acts everywhere, whatever the assignment

    status, raised = await post(
        platform, "Li", "/api/v1/incidents", {"game": women, "kind": "noise", "summary": "someone talks"}
    )
    assert status == 201, raised
    status, answer = await post(platform, "Wang", f"/api/v1/incidents/{raised['id']}/actions", {"action": "dismiss"})
    assert status == 403, answer
    status, answer = await post(platform, "Li", f"/api/v1/incidents/{raised['id']}/actions", {"action": "dismiss"})
    assert status == 201, answer

    for player in ("youth-f-p1", "youth-m-p1"):
        assert (await post(platform, "Li", f"/api/v1/players/{player}/stream-token", {}))[0] == 201
    leave = {"minutes": 5, "reason": "toilet"}
    status, answer = await post(platform, "Wang", "/api/v1/players/youth-f-p1/camera/leave", leave)
    assert status == 403, answer
    status, answer = await post(platform, "Wang", "/api/v1/players/youth-f-p1/camera/messages", {"text": "hello"})
    assert status == 403, answer
    status, answer = await post(platform, "Wang", "/api/v1/players/youth-m-p1/camera/leave", leave)
    assert status == 201, answer
    status, answer = await post(platform, "Wang", "/api/v1/players/youth-f-p1/stream-token", {})
    assert status == 403, answer  # a new token would cut the player's stream


async def test_an_assigned_arbiter_reports_incidents_and_records_appeals_only_in_their_sections(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    men = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    women = await started(platform, "youth-f-r1-b1", "youth-f-p1", "youth-f-p3")
    report = {"kind": "noise", "summary": "someone talks"}
    for body in ({"game": women}, {"player": "youth-f-p1"}, {"game": women, "player": "youth-f-p1"}, {}):
        status, answer = await post(platform, "Wang", "/api/v1/incidents", report | body)
        assert (status, answer["error"], answer.get("article")) == (403, "forbidden", "16"), (body, answer)
    status, mine = await post(platform, "Wang", "/api/v1/incidents", report | {"game": men, "player": "youth-m-p1"})
    assert status == 201, mine
    status, theirs = await post(platform, "Chen", "/api/v1/incidents", report | {"game": women})
    assert status == 201, theirs  # the deputy chief reports everywhere

    appeal = {"filed_by": {"name": "陈领队", "capacity": "team-leader", "team": "杭州"},
              "grounds": "the flag had not fallen", "deposit": {"amount": 500, "currency": "CNY"}}  # fmt: skip
    for target in ({"game": women}, {"incident": theirs["id"]}):
        status, answer = await post(platform, "Wang", "/api/v1/appeals", appeal | target)
        assert (status, answer["error"]) == (403, "forbidden"), (target, answer)
    for who, target in (("Wang", {"game": men}), ("Wang", {"incident": mine["id"]}), ("Li", {"game": women})):
        status, answer = await post(platform, who, "/api/v1/appeals", appeal | target)
        assert status == 201, (who, target, answer)


async def test_the_camera_routes_document_the_refusal_beyond_an_assignment(platform: Platformer) -> None:
    paths = (await (await platform.client.get("/api/openapi.json")).json())["paths"]
    for path in ("stream-token", "camera/messages", "camera/prompts", "camera/leave", "camera/approval"):
        responses = paths[f"/api/v1/players/{{player}}/{path}"]["post"]["responses"]
        assert "(16)" in responses["403"]["description"], path
    assert "(16)" in paths["/api/v1/incidents"]["post"]["responses"]["403"]["description"]
