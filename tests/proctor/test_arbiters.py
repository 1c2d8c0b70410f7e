"""Arbiters acting through the API: tokens, roles (16), game actions with who and why, incidents and penalties."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import insert

from proctor.account_log import record_account
from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from tests.proctor.conftest import Platformer

pytestmark = pytest.mark.asyncio


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def add_arbiter(settings: Settings, name: str, role: str) -> str:
    engine = create_database_engine(settings)
    token = f"token-{name}"
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(token)))
        record_account(connection, name, "test", "added", 0)  # as proctor arbiter add does
    engine.dispose()
    return token


async def started_game(platform: Platformer, name: str) -> int:
    """A game that started a few seconds ago (arbiters act at the server's time)."""
    start = int(time.time() * 1000) - 10_000
    _, created = await platform.create(name, start=start)
    for side in ("b", "w"):
        await platform.send("player.joined", name, {"player": f"{name}-{side}"}, at=start - 30_000)
    await platform.send("move", name, {"point": "h8"}, at=start + 5_000)
    return int(created["game"])


async def act(platform: Platformer, token: str | None, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await platform.client.post(path, json=body, headers=headers)
    return response.status, await response.json()


async def test_actions_need_a_known_token(platform: Platformer, settings: Settings) -> None:
    game = await started_game(platform, "a1")
    status, body = await act(platform, None, f"/api/v1/games/{game}/actions", {"action": "pause"})
    assert (status, body["error"]) == (401, "unauthorized")
    status, body = await act(platform, "forged", f"/api/v1/games/{game}/actions", {"action": "pause"})
    assert status == 401


async def test_pause_and_time_adjustment_are_recorded_with_who_and_why(
    platform: Platformer, settings: Settings
) -> None:
    token = add_arbiter(settings, "Li Na", "arbiter")
    game = await started_game(platform, "a2")
    status, state = await act(platform, token, f"/api/v1/games/{game}/actions",
                              {"action": "pause", "reason": "player called the arbiter"})  # fmt: skip
    assert status == 200
    assert state["verdicts"][-1]["kind"] == "clock-paused" and state["verdicts"][-1]["actor"] == "Li Na (arbiter)"
    assert state["verdicts"][-1]["cause"] == "player called the arbiter"
    status, state = await act(platform, token, f"/api/v1/games/{game}/actions",
                              {"action": "adjust", "player": "a2-w", "delta_ms": 30_000, "reason": "14.8"})  # fmt: skip
    assert status == 200 and state["verdicts"][-1]["article"] == "14.5, 14.8"
    status, body = await act(platform, token, f"/api/v1/games/{game}/actions", {"action": "teleport"})
    assert (status, body["error"]) == (400, "bad-request")


async def test_a_lower_role_is_refused_a_loss_even_when_the_request_is_forged(
    platform: Platformer, settings: Settings
) -> None:
    token = add_arbiter(settings, "Wang", "arbiter")
    game = await started_game(platform, "a3")
    status, body = await act(platform, token, f"/api/v1/games/{game}/actions",
                             {"action": "penalty", "player": "a3-b", "offence": "18.10", "role": "chief"})  # fmt: skip
    assert (status, body["error"], body["article"]) == (403, "authority", "16.3")
    assert "chief arbiter" in body["message"]
    state = await (
        await platform.client.get(f"/api/v1/platforms/{platform.name}/games/a3", headers=bearer(token))
    ).json()
    assert state["result"] is None


async def test_incident_flag_then_action_then_verdict(platform: Platformer, settings: Settings) -> None:
    arbiter_token = add_arbiter(settings, "Zhao", "arbiter")
    deputy_token = add_arbiter(settings, "Qian", "deputy-chief")
    game = await started_game(platform, "a4")
    status, created = await act(platform, arbiter_token, "/api/v1/incidents",
                                {"game": game, "kind": "earphones", "summary": "earbud visible", "article": "36.2",
                                 "player": "a4-w"})  # fmt: skip
    assert status == 201
    incident = created["id"]
    status, first = await act(platform, arbiter_token, f"/api/v1/incidents/{incident}/actions",
                              {"action": "penalty", "offence": "36.2", "note": "confirmed on camera"})  # fmt: skip
    assert status == 201 and first["verdict"]["penalty"] == "warning"
    assert first["verdict"]["articles"] == "36.2, 15.1"
    status, refused = await act(platform, arbiter_token, f"/api/v1/incidents/{incident}/actions",
                                {"action": "penalty", "offence": "36.2"})  # fmt: skip
    assert (status, refused["article"]) == (403, "16.2")  # a second 36.2 is a violation: deputy chief or chief
    for _ in range(2):
        status, verdict = await act(platform, deputy_token, f"/api/v1/incidents/{incident}/actions",
                                    {"action": "penalty", "offence": "36.2"})  # fmt: skip
        assert status == 201
    assert verdict["verdict"]["game_result"]["reason"] == "penalty"  # two violations lose the game (15.3)
    assert verdict["verdict"]["game_result"]["winner"] == "black"
    incidents = await (await platform.client.get(f"/api/v1/incidents?game={game}", headers=bearer(deputy_token))).json()
    assert [a["action"] for a in incidents[0]["actions"]] == ["penalty", "penalty", "penalty"]
    assert incidents[0]["status"] == "penalty"


async def test_unknown_incident_and_game_are_404(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Sun", "chief")
    status, _ = await act(platform, token, "/api/v1/incidents/999/actions", {"action": "note"})
    assert status == 404
    status, _ = await act(platform, token, "/api/v1/games/999/actions", {"action": "pause"})
    assert status == 404
    status, _ = await act(platform, token, "/api/v1/games/abc/actions", {"action": "pause"})
    assert status == 404
