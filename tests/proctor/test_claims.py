"""Claim mode (19.1.2 A, B): a section (or the platform's game.created) has White point out Black's forbidden moves;
the platform sends ``forbidden.claimed`` and the service rules on the claim with the engine's lapse rules (a double
three or four lapses once White places a stone; an overline stays claimable).  On the real app with signed webhooks;
the event file's ``adjudication`` key reaches the game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.events import EventFileError, load_event_file, parse_event
from proctor.models import Game
from proctor.settings import Settings
from tests.proctor.conftest import T0, Platformer, reader
from tests.proctor.test_events import EXAMPLE, engine_for

pytestmark = pytest.mark.asyncio

DOUBLE_THREE = ["h8", "a1", "i10", "a3", "j10", "a5", "k8", "a7", "k9", "a9"]
"""Black's i10 j10 and k8 k9 (h8 apart), White far away: Black's next stone at k10 makes two open threes (a 3-3)."""


async def claim_game(platform: Platformer, game: str) -> None:
    data = {"black": {"id": f"{game}-b"}, "white": {"id": f"{game}-w"}, "rule": "renju", "time_control": "rapid-15",
            "start_at": "2026-01-01T00:00:00Z", "adjudication": "claim"}  # fmt: skip
    status, body = await platform.send("game.created", game, data, at=T0 - 60_000)
    assert status == 200, body
    for side in ("b", "w"):
        await platform.send("player.joined", game, {"player": f"{game}-{side}"}, at=T0 - 30_000)


async def play(platform: Platformer, game: str, points: list[str], start: int = 1) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for index, point in enumerate(points, start=start):
        status, body = await platform.send("move", game, {"point": point}, at=T0 + index * 2_000)
        assert (status, body["status"]) == (200, "applied"), (point, body)
    return body


async def view(platform: Platformer, game: str) -> dict[str, Any]:
    response = await platform.client.get(f"/api/v1/platforms/{platform.name}/games/{game}", headers=reader(platform))
    result: dict[str, Any] = await response.json()
    return result


async def test_19_1_2_a_a_claimed_double_three_loses_for_black(platform: Platformer) -> None:
    await claim_game(platform, "c1")
    await play(platform, "c1", [*DOUBLE_THREE, "k10"])  # the 3-3 stands on the board: nobody has claimed it
    assert (await view(platform, "c1"))["result"] is None
    status, body = await platform.send("forbidden.claimed", "c1", {"player": "c1-w"}, at=T0 + 30_000)
    assert (status, body["status"]) == (200, "applied"), body
    result = (await view(platform, "c1"))["result"]
    assert (result["winner"], result["reason"]) == ("white", "forbidden-33")
    assert result["article"].endswith("(claimed)")


async def test_19_1_2_a_a_double_three_lapses_once_white_places_a_stone(platform: Platformer) -> None:
    await claim_game(platform, "c2")
    await play(platform, "c2", [*DOUBLE_THREE, "k10", "a11"])  # White plays on instead of claiming
    status, body = await platform.send("forbidden.claimed", "c2", {"player": "c2-w"}, at=T0 + 30_000)
    assert (status, body["status"]) == (200, "refused"), body
    assert (await view(platform, "c2"))["result"] is None  # the game goes on
    response = await platform.client.get(f"/api/v1/incidents?game={body['game']}", headers=reader(platform))
    (refused,) = [i for i in await response.json() if i["kind"] == "platform-disagreement"]
    assert refused["article"] == "19.1.2 A"
    assert "forbidden-move claim" in refused["summary_words"]["en"] and "指出禁手" in refused["summary_words"]["zh"]


async def test_19_1_2_b_an_overline_stays_claimable(platform: Platformer) -> None:
    await claim_game(platform, "c3")
    # Black: h8 i8 j8 l8 m8, then k8 makes six in a row; White plays on twice, then claims.
    await play(platform, "c3", ["h8", "a1", "i8", "a2", "j8", "a3", "l8", "a4", "m8", "a6", "k8", "b15", "o1", "b13"])
    status, body = await platform.send("forbidden.claimed", "c3", {"player": "c3-w"}, at=T0 + 40_000)
    assert (status, body["status"]) == (200, "applied"), body
    result = (await view(platform, "c3"))["result"]
    assert (result["winner"], result["reason"]) == ("white", "forbidden-overline")


async def test_a_claim_in_an_automatic_game_is_refused(platform: Platformer) -> None:
    data = {"black": {"id": "c4-b"}, "white": {"id": "c4-w"}, "time_control": "rapid-15",
            "start_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    await platform.send("game.created", "c4", data, at=T0 - 60_000)
    for side in ("b", "w"):
        await platform.send("player.joined", "c4", {"player": f"c4-{side}"}, at=T0 - 30_000)
    await play(platform, "c4", ["h8", "a1"])
    status, body = await platform.send("forbidden.claimed", "c4", {"player": "c4-w"}, at=T0 + 30_000)
    assert (status, body["status"]) == (200, "refused"), body
    bad = await platform.send("game.created", "c5", {**data, "adjudication": "sometimes"}, at=T0 - 60_000)
    assert bad[0] == 400 and "'data.adjudication' must be 'automatic' or 'claim'" in bad[1]["message"]


async def test_the_event_files_adjudication_key_reaches_the_game(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    claimed = text.replace("[sections.policy]", '[sections.policy]\nadjudication = "claim"', 1)
    assert claimed != text
    spec = parse_event(claimed, EXAMPLE.parent)
    assert spec.sections[0].policy.adjudication == "claim"
    with pytest.raises(EventFileError, match="adjudication"):
        parse_event(text.replace("[sections.policy]", '[sections.policy]\nadjudication = "never"', 1), EXAMPLE.parent)
    path = tmp_path / "claim.toml"
    path.write_text(claimed, encoding="utf-8")
    engine = engine_for(settings.database_url)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    first = spec.sections[0]
    pairing = next(p for p in first.pairings if p.round_no == 1)
    data = {"event": f"{spec.slug}/{first.slug}", "round": 1, "board": pairing.board,
            "black": {"id": "x-b"}, "white": {"id": "x-w"}, "rule": first.rule, "opening": first.opening,
            "time_control": first.time_control, "start_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    status, body = await platform.send("game.created", "claim-linked", data, at=T0 - 60_000)
    assert status == 200, body
    with engine.connect() as connection:
        game = connection.execute(select(Game).where(col(Game.external_id) == "claim-linked")).one()
    engine.dispose()
    assert game.pairing_id is not None and game.settings["game"]["adjudication"] == "claim"
