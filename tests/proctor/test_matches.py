"""Matches of several games a pairing (regulations 2023 VII(2), the two-game system): each game its own pairing row
with its number in the match, colours swapped in game 2, both games in the standings, the CSV and the TRF file, and
the loader's refusal of a player seated twice in a round; on the real app with signed webhooks."""

from __future__ import annotations

import csv
import io
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from engine.standings import ResultKind
from engine.trf import read_trf
from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, export_event, load_event_file, parse_event
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter
from tests.proctor.test_review import get, settings  # noqa: F401  (the fixture)

SECTION = "/api/v1/events/match-cup/sections/open"
EVENT = """
[event]
slug = "match-cup"
name = "Match Cup"

[[sections]]
slug = "open"
name = "Open"
rule = "freestyle"
opening = "free"
time_control = "rapid-15"
system = "swiss"
rounds = 1
tiebreaks = "PTS,WIN"
games_per_match = 2
{scoring}
[[sections.players]]
start_no = 1
name = "M1"
platform_ref = "m1"

[[sections.players]]
start_no = 2
name = "M2"
platform_ref = "m2"

[[sections.players]]
start_no = 3
name = "M3"
platform_ref = "m3"

[[sections.players]]
start_no = 4
name = "M4"
platform_ref = "m4"

[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
platform_game_id = "b1-g1"

[[sections.pairings]]
round = 1
board = 1
game = 2
black = 2
white = 1
platform_game_id = "b1-g2"

[[sections.pairings]]
round = 1
board = 2
black = 3
white = 4
platform_game_id = "b2-g1"

[[sections.pairings]]
round = 1
board = 2
game = 2
black = 4
white = 3
platform_game_id = "b2-g2"
"""


def load(service: Settings, tmp_path: Path, scoring: str = "") -> None:
    path = tmp_path / "match-cup.toml"
    path.write_text(EVENT.format(scoring=scoring), encoding="utf-8")
    engine = create_database_engine(service)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def play(platform: Platformer, game: str, black: str, white: str, end: tuple[str, str]) -> None:
    """One game through signed webhooks, ended by ``("resign", player)`` or ``("draw", offering player)``."""
    start = int(time.time() * 1000) - 60_000
    data = {"black": {"id": black}, "white": {"id": white}, "rule": "freestyle", "time_control": "rapid-15",
            "start_at": iso(start)}  # fmt: skip
    status, body = await platform.send("game.created", game, data, at=start - 60_000)
    assert status == 200 and "incidents" not in body, body  # linked to its pairing, seats as the pairing says
    for player in (black, white):
        await platform.send("player.joined", game, {"player": player}, at=start - 30_000)
    await platform.send("move", game, {"point": "h8"}, at=start + 5_000)
    await platform.send("move", game, {"point": "h9"}, at=start + 7_000)
    how, player = end
    if how == "resign":
        await platform.send("resign", game, {"player": player}, at=start + 9_000)
    else:
        other = white if player == black else black
        await platform.send("draw.offered", game, {"player": player}, at=start + 9_000)
        await platform.send("draw.accepted", game, {"player": other}, at=start + 10_000)


async def play_the_matches(platform: Platformer) -> None:
    """M1-M2 1-0 then 0-1 (M1 wins game 1 with Black, M2 game 2 with Black); M3-M4 1-0 then ½-½."""
    await play(platform, "b1-g1", "m1", "m2", ("resign", "m2"))
    await play(platform, "b1-g2", "m2", "m1", ("resign", "m1"))
    await play(platform, "b2-g1", "m3", "m4", ("resign", "m4"))
    await play(platform, "b2-g2", "m4", "m3", ("draw", "m4"))


async def exports(platform: Platformer, token: str) -> tuple[dict[str, Any], list[list[str]], str]:
    body = await (await get(platform, f"{SECTION}/standings", token)).json()
    response = await get(platform, f"{SECTION}/standings.csv", token)
    assert response.status == 200, await response.text()
    rows = list(csv.reader(io.StringIO(await response.text())))
    trf = await (await get(platform, f"{SECTION}/standings.trf", token)).text()
    return body, rows, trf


@pytest.mark.asyncio
async def test_vii_2_both_games_of_a_match_count_game_by_game(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path)
    token = add_arbiter(settings, "Panel", "reviewer")
    await play_the_matches(platform)
    listed = await (await platform.client.get("/api/v1/games")).json()
    assert [(g["platform_game_id"], g["board"], g["match_game"]) for g in listed] == [
        ("b1-g1", 1, 1), ("b1-g2", 1, 2), ("b2-g1", 2, 1), ("b2-g2", 2, 2),
    ]  # fmt: skip
    body, rows, trf = await exports(platform, token)
    assert body["round"] == 1 and body["complete"] == 1 and body["games_per_match"] == 2
    assert {r["start_no"]: r["points"] for r in body["rows"]} == {1: "1", 2: "1", 3: "1.5", 4: "0.5"}
    assert [(p["board"], p["match_game"], p["black"]["start_no"], p["result"]) for p in body["pairings"]] == [
        (1, 1, 1, "1-0"), (1, 2, 2, "1-0"), (2, 1, 3, "1-0"), (2, 2, 4, "½-½"),
    ]  # fmt: skip
    assert rows[0] == ["rank", "start_no", "name", "team", "rating", "points", "WIN", "round 1 game 1",
                       "round 1 game 2"]  # fmt: skip
    cells = {row[1]: (row[5], row[7:]) for row in rows[1:]}
    assert cells == {"1": ("1", ["2w1", "2b0"]), "2": ("1", ["1b0", "1w1"]), "3": ("1.5", ["4w1", "4b½"]),
                     "4": ("0.5", ["3b0", "3w½"])}  # fmt: skip
    # TRF-16: a column per game; TRF's "w" is the first player, Black here.
    tournament = read_trf(trf).tournament
    assert tournament.rounds == 2
    assert {e.start_no: e.declared_points for e in tournament.entrants} == {
        1: Fraction(1), 2: Fraction(1), 3: Fraction(3, 2), 4: Fraction(1, 2)
    }  # fmt: skip
    assert [(r.opponent, r.color, r.kind) for r in tournament.entrant(3).rounds] == [
        (4, "w", ResultKind.WIN), (4, "b", ResultKind.DRAW)
    ]  # fmt: skip


@pytest.mark.asyncio
async def test_vii_2_a_match_scored_by_its_total(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path, 'match_scoring = "match"\n')
    token = add_arbiter(settings, "Panel", "reviewer")
    await play_the_matches(platform)
    body, rows, trf = await exports(platform, token)
    assert body["round"] == 1 and body["match_scoring"] == "match"
    # 1-1 is a drawn match; 1½-½ a won one.
    assert {r["start_no"]: r["points"] for r in body["rows"]} == {1: "0.5", 2: "0.5", 3: "1", 4: "0"}
    assert rows[0][6:] == ["WIN", "round 1", "round 1 game 1", "round 1 game 2"]
    cells = {row[1]: row[7:] for row in rows[1:]}
    assert cells == {"1": ["2w½", "2w1", "2b0"], "2": ["1b½", "1b0", "1w1"], "3": ["4w1", "4w1", "4b½"],
                     "4": ["3b0", "3b0", "3w½"]}  # fmt: skip
    # TRF-16 has one column a round: the match.
    tournament = read_trf(trf).tournament
    assert tournament.rounds == 1 and tournament.entrant(3).rounds[0].kind is ResultKind.WIN


@pytest.mark.asyncio
async def test_vii_2_a_result_entered_for_a_matchs_second_game(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path)
    chief = add_arbiter(settings, "Chief", "chief")
    for game, result in (((1, 1), "1-0"), ((1, 2), "0-1"), ((2, 1), "1-0")):
        entry = {"round": 1, "board": game[0], "match_game": game[1], "result": result, "reason": "scoresheet"}
        status, body = await act(platform, chief, f"{SECTION}/results", entry)
        assert status == 201 and body["match_game"] == game[1], body
    refused = await get(platform, f"{SECTION}/standings?round=1", chief)
    assert refused.status == 409 and "round 1 board 2 game 2" in (await refused.json())["message"]
    entry = {"round": 1, "board": 2, "match_game": 2, "result": "½-½", "reason": "scoresheet"}
    assert (await act(platform, chief, f"{SECTION}/results", entry))[0] == 201
    status, _ = await act(platform, chief, f"{SECTION}/results", {**entry, "match_game": 3})
    assert status == 404
    body = await (await get(platform, f"{SECTION}/standings", chief)).json()
    # Results are written as each game's Black-White: game 2's "0-1" is a win for White, M1.
    assert {r["start_no"]: r["points"] for r in body["rows"]} == {1: "2", 2: "0", 3: "1.5", 4: "0.5"}


SECTION_HEAD = """
[event]
slug = "e"
name = "E"

[[sections]]
slug = "s"
name = "S"
time_control = "rapid-15"
games_per_match = {games}
"""


def section_file(pairings: str, games: int = 2) -> str:
    players = "".join(f'\n[[sections.players]]\nstart_no = {n}\nname = "P{n}"\n' for n in range(1, 5))
    return SECTION_HEAD.format(games=games) + players + pairings


def pairing(round_no: int, board: int, black: int, white: int, game: int | None = None) -> str:
    number = f"game = {game}\n" if game else ""
    return f"\n[[sections.pairings]]\nround = {round_no}\nboard = {board}\n{number}black = {black}\nwhite = {white}\n"


@pytest.mark.parametrize(
    ("pairings", "games", "message"),
    [
        (pairing(1, 1, 1, 2) + pairing(1, 2, 2, 3), 2, "player 2 already plays on board 1 in round 1"),
        (pairing(1, 1, 1, 2) + pairing(1, 3, 2, 1), 2, "player 2 already plays on board 1 in round 1"),
        (pairing(1, 1, 1, 2) + pairing(1, 2, 3, 1), 1, "player 1 already plays on board 1 in round 1"),
        (pairing(1, 1, 1, 2) + pairing(1, 1, 1, 2, game=2), 2, "expected black 2, white 1"),
        (pairing(1, 1, 1, 2) + pairing(1, 1, 3, 4, game=2), 2, "colours swapped game by game"),
        (pairing(1, 1, 1, 2, game=3), 2, r"plays 2 game\(s\) per match"),
        (pairing(1, 1, 1, 2, game=2), 2, "game 1 is missing"),
        (pairing(1, 1, 1, 2) + pairing(1, 1, 2, 1, game=2) + pairing(1, 1, 2, 1, game=2), 2,
         "round 1 board 1 game 2 is given twice"),
    ],
)  # fmt: skip
def test_vii_2_the_loader_refuses_a_player_twice_in_a_round(
    pairings: str, games: int, message: str, tmp_path: Path
) -> None:
    with pytest.raises(EventFileError, match=message):
        parse_event(section_file(pairings, games), tmp_path)


def test_vii_2_a_matchs_missing_games_are_added_with_colours_swapped(database_url: str, tmp_path: Path) -> None:
    spec = parse_event(section_file(pairing(1, 1, 1, 2) + pairing(1, 2, 4, 3)), tmp_path)
    assert [(p.board, p.game_no, p.black, p.white) for p in spec.sections[0].pairings] == [
        (1, 1, 1, 2), (1, 2, 2, 1), (2, 1, 4, 3), (2, 2, 3, 4),
    ]  # fmt: skip
    path = tmp_path / "e.toml"
    path.write_text(section_file(pairing(1, 1, 1, 2)), encoding="utf-8")
    engine = create_database_engine(Settings(database_url=database_url))
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
        exported = export_event(connection, "e")
    engine.dispose()
    again = parse_event(exported, tmp_path)
    assert [(p.game_no, p.black, p.white) for p in again.sections[0].pairings] == [(1, 1, 2), (2, 2, 1)]
