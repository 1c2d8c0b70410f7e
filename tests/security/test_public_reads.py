"""What anyone may read (item 1 of issue 12): a platform or a broadcast may show a game's position, moves, clocks,
state and result and its players' names; incidents, verdicts' causes, player ids, feed state and camera data are for
the arbiters and the review panel (a bearer token or a dashboard session).  Every unauthenticated GET route is
either in the public list below or refused."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import pytest

from proctor.settings import Settings
from proctor.web.routes import ROUTES
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game

pytestmark = pytest.mark.asyncio

PUBLIC: Final = frozenset({
    "/api/v1/platforms/{platform}/games/{game_id}", "/api/v1/games", "/api/v1/events", "/api/openapi.json",
    "/healthz", "/arbiter", "/review", "/assets/{name}.js", "/",
})  # fmt: skip
"""The GET routes that answer without credentials (the pages are the login forms, and the modules their code; the
games and events what a broadcast shows; the landing page what /healthz and /api/v1/events say)."""
BY_TOKEN: Final = frozenset(
    {"/play/{token}", "/api/v1/rtc/config", "/api/v1/play/{token}/events", "/api/v1/play/{token}/devices"}
)
"""The player's page and what it reads: the player's stream token is the credential (404 without a good one)."""

SECRET_SUMMARY = "looked at a phone under the table"


async def game_with_an_incident(platform: Platformer, settings: Settings) -> str:
    token = add_arbiter(settings, "Chief", "chief")
    game = await started_game(platform, "g1")
    raised = await platform.client.post("/api/v1/incidents", headers=bearer(token), json={
        "game": game, "kind": "phone", "summary": SECRET_SUMMARY, "player": "g1-b"})  # fmt: skip
    assert raised.status == 201
    return token


async def test_the_public_game_view_shows_the_board_and_names_but_no_incidents_or_ids(
    platform: Platformer, settings: Settings
) -> None:
    await game_with_an_incident(platform, settings)
    response = await platform.client.get(f"/api/v1/platforms/{platform.name}/games/g1")
    assert response.status == 200
    view = await response.json()
    assert view["moves"] == ["h8"] and view["position"]["black"] == ["h8"] and view["to_move"] == "white"
    assert view["players"] == {"black": {"name": "Black"}, "white": {"name": "White"}}
    assert set(view["clocks"]) == {"black", "white"} and view["status"] == "live" and view["result"] is None
    for hidden in ("incidents", "verdicts", "feed", "pending_verdict"):
        assert hidden not in view, hidden
    text = json.dumps(view)
    assert SECRET_SUMMARY not in text and "g1-b" not in text and "g1-w" not in text


async def test_arbiters_and_the_review_panel_read_the_full_view(platform: Platformer, settings: Settings) -> None:
    await game_with_an_incident(platform, settings)
    panel = add_arbiter(settings, "Panel", "reviewer")
    view = await (
        await platform.client.get(f"/api/v1/platforms/{platform.name}/games/g1", headers=bearer(panel))
    ).json()
    assert [i["summary"] for i in view["incidents"]] == [SECRET_SUMMARY]
    assert set(view["clocks"]) == {"g1-b", "g1-w"} and "feed" in view and "verdicts" in view
    forged = await platform.client.get(f"/api/v1/platforms/{platform.name}/games/g1", headers=bearer("forged"))
    assert forged.status == 401  # credentials that are sent must be good: no silent fall-back to the public view


async def test_the_public_lists_carry_no_player_ids_or_incidents(platform: Platformer, settings: Settings) -> None:
    await game_with_an_incident(platform, settings)
    for path in ("/api/v1/games", "/api/v1/events", "/healthz"):
        response = await platform.client.get(path)
        assert response.status == 200, path
        text = await response.text()
        assert SECRET_SUMMARY not in text and "g1-b" not in text, path


def _filled(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: {"platform": "tourney", "game_id": "g1"}.get(m.group(1), "1"), path)


async def test_every_other_read_needs_an_arbiter_or_the_players_token(platform: Platformer, settings: Settings) -> None:
    token = await game_with_an_incident(platform, settings)
    stream = await platform.client.post("/api/v1/players/g1-b/stream-token", headers=bearer(token))
    assert stream.status == 201
    for route in ROUTES:
        if route.method != "GET" or route.path in PUBLIC:
            continue
        response = await platform.client.get(_filled(route.path), params={"name": "x.jpg"})
        expected: Any = 404 if route.path in BY_TOKEN else 401
        assert response.status == expected, (route.path, response.status)
        assert SECRET_SUMMARY not in await response.text()
