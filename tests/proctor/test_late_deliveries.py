"""Late deliveries (issue 14: platforms retry for minutes): a ``player.joined`` stamped before the start, delivered
after the service ruled a no-show (14.3), is put in its place and the verdict revised, with an incident saying so;
an event stamped after the verdict changes nothing; past the window, or after an arbiter acted, the arbiter decides.
On the real app, through signed webhooks; the revision is an appended engine event, and the game reloads the same."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any, cast

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.app import create_app
from proctor.database import create_database_engine
from proctor.live_games import LiveGames
from proctor.models import GameEvent
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, reader, register_platform
from tests.proctor.test_arbiters import act, add_arbiter

pytestmark = pytest.mark.asyncio


def now_ms() -> int:
    return int(time.time() * 1000)


async def view(platform: Platformer, game: str) -> dict[str, Any]:
    response = await platform.client.get(f"/api/v1/platforms/{platform.name}/games/{game}", headers=reader(platform))
    assert response.status == 200
    result: dict[str, Any] = await response.json()
    return result


async def no_show(platform: Platformer, game: str) -> tuple[int, int]:
    """A game that started 10 s ago, Black arrived before it and White did not: the timer rules a no-show at the
    start's instant (14.3).  The game's id and its start."""
    start = now_ms() - 10_000
    status, created = await platform.create(game, start=start)
    assert status == 200, created
    status, _ = await platform.send("player.joined", game, {"player": f"{game}-b"}, at=start - 30_000)
    assert status == 200
    for _ in range(60):
        state = await view(platform, game)
        if state["result"]:
            break
        await asyncio.sleep(0.1)
    assert (state["result"]["reason"], state["result"]["winner"]) == ("no-show", "black"), state
    return int(created["game"]), start


async def incidents(platform: Platformer, game: int) -> list[dict[str, Any]]:
    response = await platform.client.get(f"/api/v1/incidents?game={game}", headers=reader(platform))
    assert response.status == 200
    listed: list[dict[str, Any]] = await response.json()
    return listed


async def test_14_3_a_late_arrival_stamped_before_the_start_reverses_the_no_show(
    platform: Platformer, settings: Settings
) -> None:
    game, start = await no_show(platform, "late-1")
    status, body = await platform.send("player.joined", "late-1", {"player": "late-1-w"}, at=start - 20_000)
    assert (status, body["status"]) == (200, "revised"), body
    state = await view(platform, "late-1")
    assert state["result"] is None and state["status"] == "live", state
    (revised,) = [i for i in await incidents(platform, game) if i["kind"] == "verdict-revised"]
    assert revised["article"] == "14.3, 35.3" and revised["evidence"]["early_ms"] == 20_000
    assert revised["evidence"]["withdrawn"] == {"reason": "no-show", "winner": "black", "double_loss": False}
    assert revised["evidence"]["now"] is None
    assert revised["summary_words"]["en"].startswith("a late player's arrival (seq 3, stamped 20 s before the verdict)")
    assert "the game goes on" in revised["summary_words"]["en"] and "对局继续" in revised["summary_words"]["zh"]
    # The game goes on from the start with both present: Black's move is applied, in its place in the timeline.
    status, body = await platform.send("move", "late-1", {"point": "h8"}, at=now_ms())
    assert (status, body["status"]) == (200, "applied"), body
    response = await platform.client.get(f"/api/v1/games/{game}/timeline", headers=reader(platform))
    timeline = await response.json()
    lines = [item for item in timeline["events"] if "kind" in item and item["type"] != "incident"]
    kinds = [line["kind"] for line in lines]
    assert kinds.index("verdict") < kinds.index("revision"), kinds  # the verdict stays, the revision comes after
    assert [line["at"] for line in lines if line["kind"] == "arrival"] == [start - 30_000, start - 20_000]
    (line,) = [line for line in lines if line["kind"] == "revision"]
    assert "withdrawn" in line["text_words"]["en"] and "撤销" in line["text_words"]["zh"]
    assert [m["point"] for m in timeline["moves"]] == ["h8"]
    # Appended, not edited: the verdict's tick is still in the log, the revision after it; a reload gives the same.
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        stored = (
            connection.execute(
                select(col(GameEvent.source)).where(col(GameEvent.game_id) == game).order_by(col(GameEvent.position))
            )
            .scalars()
            .all()
        )
        assert stored[-3:] == ["deadline", "revision", "feed"], stored
        live = LiveGames(settings, cast(Any, None), cast(Any, None))  # loading uses neither staging nor audit
        live.load(connection)
    engine.dispose()
    assert live.games[game].state.outcome is None and live.games[game].state.game.ply == 1


async def test_an_arrival_stamped_after_the_verdict_changes_nothing(platform: Platformer) -> None:
    game, _ = await no_show(platform, "late-2")
    status, body = await platform.send("player.joined", "late-2", {"player": "late-2-w"}, at=now_ms())
    assert (status, body["status"]) == (200, "applied"), body  # recorded as an arrival after the end
    assert (await view(platform, "late-2"))["result"]["reason"] == "no-show"
    assert not {i["kind"] for i in await incidents(platform, game)} & {"verdict-revised", "late-delivery"}


async def test_past_the_window_the_arbiter_decides(settings: Settings, aiohttp_client: Any) -> None:
    narrow = replace(settings, late_delivery_window_s=0)
    secret = register_platform(narrow.database_url)
    platform = Platformer(await aiohttp_client(create_app(narrow)), "tourney", secret)
    game, start = await no_show(platform, "late-3")
    status, body = await platform.send("player.joined", "late-3", {"player": "late-3-w"}, at=start - 20_000)
    assert (status, body["status"]) == (200, "refused"), body
    assert (await view(platform, "late-3"))["result"]["reason"] == "no-show"
    (left,) = [i for i in await incidents(platform, game) if i["kind"] == "late-delivery"]
    assert left["evidence"]["why"] == "window" and left["article"] == "14.3, 35.3"
    assert left["summary_words"]["en"].endswith("the verdict is more than 0 s old; the arbiter decides")


async def test_after_an_arbiter_acted_the_arbiter_decides(platform: Platformer, settings: Settings) -> None:
    game, start = await no_show(platform, "late-4")
    chief = add_arbiter(settings, "Chief", "chief")
    status, answer = await act(platform, chief, f"/api/v1/games/{game}/actions", {"action": "confirm-result"})
    assert status == 200, answer
    status, body = await platform.send("player.joined", "late-4", {"player": "late-4-w"}, at=start - 20_000)
    assert (status, body["status"]) == (200, "refused"), body
    assert (await view(platform, "late-4"))["result"]["reason"] == "no-show"
    (left,) = [i for i in await incidents(platform, game) if i["kind"] == "late-delivery"]
    assert left["evidence"]["why"] == "acted"
    assert "an arbiter has acted on the game since" in left["summary_words"]["en"]
