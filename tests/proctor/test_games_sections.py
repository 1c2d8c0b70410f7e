"""Games carry the event, section, round and board of the pairing they are linked to (null when unpaired)."""

from __future__ import annotations

import pytest

from proctor.events import load_event_file
from proctor.settings import Settings
from tests.proctor.conftest import T0, Platformer
from tests.proctor.test_events import EXAMPLE, engine_for


@pytest.mark.asyncio
async def test_games_list_their_event_section_round_and_board(platform: Platformer, settings: Settings) -> None:
    engine = engine_for(settings.database_url)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
    engine.dispose()
    data = {"black": {"id": "youth-m-p1"}, "white": {"id": "youth-m-p3"}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    status, _ = await platform.send("game.created", "youth-m-r1-b1", data, at=T0 - 60_000)
    assert status == 200
    loose = {**data, "black": {"id": "stranger-1"}, "white": {"id": "stranger-2"}}
    status, _ = await platform.send("game.created", "friendly-1", loose, at=T0 - 60_000)
    assert status == 200
    games = await (await platform.client.get("/api/v1/games")).json()
    by_id = {g["platform_game_id"]: g for g in games}
    linked, unpaired = by_id["youth-m-r1-b1"], by_id["friendly-1"]
    assert (linked["event"], linked["section"], linked["round"], linked["board"]) == (
        "national-youth-2021",
        "youth-m",
        1,
        1,
    )
    assert (unpaired["event"], unpaired["section"], unpaired["round"], unpaired["board"]) == (None, None, None, None)
    view = await (await platform.client.get(f"/api/v1/platforms/{linked['platform']}/games/youth-m-r1-b1")).json()
    assert (view["event"], view["section"], view["round"], view["board"]) == ("national-youth-2021", "youth-m", 1, 1)
