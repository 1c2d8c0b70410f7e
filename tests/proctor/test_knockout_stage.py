"""Stages (regulations 2023 VII(3), VII(4)3; 27.1, 27.7, 28.4, 30.4): a round-robin preliminary whose top four go on
to a knockout of two-game matches, drawn by the chief arbiter from the final standings, advanced by the games' results
as they end (each next game's pairing created by the service), a tied match decided by the play-off (two games at
5 + 3, then single games at 3 + 2 until one is won), and the final places; the tie at the cut refused until the
chief gives the seeds.  On the real app with signed webhooks."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, export_event, load_event_file, parse_event
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter
from tests.proctor.test_review import get, settings  # noqa: F401  (the fixture)

EVENT = "/api/v1/events/stage-cup"
PLAYERS = {1: "甲", 2: "乙", 3: "丙", 4: "丁", 5: "戊"}


def event_file(finals: str = "", played: bool = False) -> str:
    """The stage cup; ``played``: the preliminaries' round with its results (1 and 3 win, 5 has the bye)."""
    players = "".join(
        f'\n[[sections.players]]\nstart_no = {no}\nname = "{name}"\nplatform_ref = "p{no}"\n'
        for no, name in PLAYERS.items()
    )
    pairings = "".join(
        f"\n[[sections.pairings]]\nround = 1\nboard = {board}\nblack = {black}\n"
        + (f"white = {white}\n" if white else "")
        + ('result = "1-0"\n' if played and white else "")
        for board, black, white in ((1, 1, 2), (2, 3, 4), (3, 5, None))
    )
    return f"""
[event]
slug = "stage-cup"
name = "Stage Cup"

[[sections]]
slug = "prelims"
name = "Preliminaries"
rule = "freestyle"
time_control = "rapid-15"
system = "round-robin"
rounds = 1
tiebreaks = "PTS"
play_off_ties = "qualification"
{players}{pairings}
[[sections]]
slug = "finals"
name = "Finals"
rule = "freestyle"
time_control = "rapid-15"
system = "knockout"
qualify_from = "prelims"
qualifiers = 4
games_per_match = 2
{finals}
"""


PRELIMS = [  # one round of the preliminaries: (board, black, white, winner)
    (1, 1, 2, 1),
    (2, 3, 4, 3),
]


def load(settings: Settings, tmp_path: Path, text: str) -> None:  # noqa: F811
    path = tmp_path / "stage-cup.toml"
    path.write_text(text, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def play(
    platform: Platformer, section: str, where: tuple[int, int, int], black: int, white: int, winner: int | None,
    time_control: str = "rapid-15",
) -> None:  # fmt: skip
    """One game through signed webhooks, linked by event, round, board and game of the match; won by resignation or
    drawn by agreement."""
    round_no, board, game_no = where
    name = f"{section}-r{round_no}-b{board}-g{game_no}"
    start = int(time.time() * 1000) - 60_000
    data = {"black": {"id": f"p{black}"}, "white": {"id": f"p{white}"}, "rule": "freestyle",
            "time_control": time_control, "start_at": iso(start), "event": f"stage-cup/{section}", "round": round_no,
            "board": board, "match_game": game_no}  # fmt: skip
    status, body = await platform.send("game.created", name, data, at=start - 60_000)
    assert status == 200 and "incidents" not in body, body  # linked to the pairing the bracket created
    for player in (black, white):
        await platform.send("player.joined", name, {"player": f"p{player}"}, at=start - 30_000)
    await platform.send("move", name, {"point": "h8"}, at=start + 5_000)
    await platform.send("move", name, {"point": "h9"}, at=start + 7_000)
    if winner is None:
        await platform.send("draw.offered", name, {"player": f"p{black}"}, at=start + 9_000)
        status, _ = await platform.send("draw.accepted", name, {"player": f"p{white}"}, at=start + 10_000)
    else:
        loser = white if winner == black else black
        status, _ = await platform.send("resign", name, {"player": f"p{loser}"}, at=start + 9_000)
    assert status == 200


async def bracket(platform: Platformer, token: str) -> dict[str, Any]:
    response = await get(platform, f"{EVENT}/sections/finals/bracket", token)
    assert response.status == 200
    body: dict[str, Any] = await response.json()
    return body


def next_games(body: dict[str, Any]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(m["round"], m["board"]): m["next"] for m in body["matches"] if m["next"] is not None}


async def play_next(platform: Platformer, token: str, round_no: int, board: int, winner_seed: int | None) -> None:
    """Play the match's next game as the bracket says it (colours, time control): ``winner_seed`` by start number
    in the finals (= seed), None for a draw."""
    upcoming = next_games(await bracket(platform, token))[round_no, board]
    black, white = upcoming["black"], upcoming["white"]
    seeds = await bracket(platform, token)
    by_seed = {s["seed"]: s["name"] for s in seeds["seeds"]}
    refs = {name: no for no, name in PLAYERS.items()}
    black_ref, white_ref = refs[by_seed[black["start_no"]]], refs[by_seed[white["start_no"]]]
    winner = None if winner_seed is None else refs[by_seed[winner_seed]]
    control = {"playoff-5+3": "5+3", "playoff-3+2": "3+2"}.get(upcoming["time_control"], "rapid-15")
    await play(platform, "finals", (round_no, board, upcoming["game"]), black_ref, white_ref, winner, control)


async def play_the_finals(platform: Platformer, chief: str) -> None:
    """Semi-final 1 won 2-0; semi-final 2 split 1-1, its play-off's two games at 5 + 3 split as well, a single game at
    3 + 2 drawn, the next won (VII(4)3); the final won 2-0 (27.7, 28.4)."""
    # Semi-final 1: 甲 (seed 1) beats 丁 (seed 4) 2-0.  Semi-final 2: 丙 (2) and 戊 (3) split 1-1: play-off.
    await play_next(platform, chief, 1, 1, 1)
    await play_next(platform, chief, 1, 1, 1)
    await play_next(platform, chief, 1, 2, 2)
    await play_next(platform, chief, 1, 2, 3)
    body = await bracket(platform, chief)
    semi = next(m for m in body["matches"] if (m["round"], m["board"]) == (1, 2))
    assert semi["status"] == "play-off" and semi["next"]["play_off"] is True
    assert semi["next"]["time_control"] == "playoff-5+3" and semi["next"]["game"] == 3
    # The play-off's two games at 5 + 3 split as well; the first single game at 3 + 2 is drawn, the next one won.
    await play_next(platform, chief, 1, 2, 2)
    await play_next(platform, chief, 1, 2, 3)
    body = await bracket(platform, chief)
    semi = next(m for m in body["matches"] if (m["round"], m["board"]) == (1, 2))
    assert semi["next"]["time_control"] == "playoff-3+2" and semi["next"]["game"] == 5
    await play_next(platform, chief, 1, 2, None)
    await play_next(platform, chief, 1, 2, 3)
    body = await bracket(platform, chief)
    semi = next(m for m in body["matches"] if (m["round"], m["board"]) == (1, 2))
    assert semi["status"] == "decided" and semi["winner"]["name"] == "戊" and len(semi["games"]) == 6
    assert [g["play_off"] for g in semi["games"]] == [False, False, True, True, True, True]
    # The final: 甲 against 戊, two games; 甲 wins both.
    final = next(m for m in body["matches"] if m["round"] == 2)
    assert [p["name"] for p in final["players"]] == ["甲", "戊"] and final["next"]["game"] == 1
    await play_next(platform, chief, 2, 1, 1)
    await play_next(platform, chief, 2, 1, 1)
    body = await bracket(platform, chief)
    assert body["finished"] is True and body["champion"] == "甲"
    assert [(p["label"], p["name"]) for p in body["places"]] == [("1", "甲"), ("2", "戊"), ("3–4", "丙"),
                                                                 ("3–4", "丁")]  # fmt: skip


@pytest.mark.asyncio
async def test_vii_3_top_four_to_a_knockout_with_a_play_off_to_final_places(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path, event_file())
    chief = add_arbiter(settings, "Chief", "chief")
    arbiter = add_arbiter(settings, "Arbiter", "arbiter")
    # Before the draw: the bracket is empty, and the standings say so.
    body = await bracket(platform, chief)
    assert body["drawn"] is False and body["qualifiers"] == 4 and body["play_off"] == ["playoff-5+3", "playoff-3+2"]
    # Round 1 of the preliminaries: 1 and 3 win, 5 has the bye.
    for board, black, white, winner in PRELIMS:
        await play(platform, "prelims", (1, board, 1), black, white, winner)
    prelims = await (await get(platform, f"{EVENT}/sections/prelims/standings", chief)).json()
    assert [(r["place"], r["start_no"]) for r in prelims["rows"]][:3] == [(1, 1), (1, 3), (1, 5)]
    # Places 4-5 are 2 and 4 on 0 points each: a tie across the cut of 4, to be played off (VII(4)3).
    assert prelims["play_offs"] == [{"places": "4–5", "players": [{"start_no": 2, "name": "乙"},
                                                                  {"start_no": 4, "name": "丁"}],
                                     "why": "qualification", "final": True,
                                     "article": "2023 regulations VII(4)3"}]  # fmt: skip
    draw = f"{EVENT}/sections/finals/bracket"
    status, refused = await act(platform, arbiter, draw, {"reason": "the preliminaries are over"})
    assert status == 403 and refused["article"] == "16"
    status, refused = await act(platform, chief, draw, {"reason": "the preliminaries are over"})
    assert status == 409 and refused["article"] == "VII(4)3", refused
    assert "乙 (2)" in refused["message"] and "丁 (4)" in refused["message"]
    status, refused = await act(platform, chief, draw, {"reason": "x", "seeds": [1, 3, 5, 2, 4]})
    assert status == 400
    status, refused = await act(platform, chief, draw, {"reason": "x", "seeds": [1, 2, 3, 4]})
    assert status == 409 and "甲" not in refused["message"] and "戊 (place 1)" in refused["message"]
    # 丁 won the play-off for place 4 (played elsewhere): the chief seeds the four.
    status, drawn = await act(platform, chief, draw, {"reason": "丁 won the play-off for place 4",
                                                      "seeds": [1, 3, 5, 4]})  # fmt: skip
    assert status == 201, drawn
    assert [g["black"] for g in drawn["games"]] == [1, 2] and [g["white"] for g in drawn["games"]] == [4, 3]
    status, _ = await act(platform, chief, draw, {"reason": "again", "seeds": [1, 3, 5, 4]})
    assert status == 409
    body = await bracket(platform, arbiter)
    assert [s["name"] for s in body["seeds"]] == ["甲", "丙", "戊", "丁"]
    assert next_games(body)[1, 1]["black"]["name"] == "甲" and next_games(body)[1, 2]["black"]["name"] == "丙"

    await play_the_finals(platform, chief)
    standings = await (await get(platform, f"{EVENT}/sections/finals/standings", chief)).json()
    assert [(r["place_label"], r["name"]) for r in standings["rows"]][:2] == [("1", "甲"), ("2", "戊")]
    text = await (await get(platform, f"{EVENT}/sections/finals/standings.csv", chief)).text()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "place" and rows[1][:3] == ["1", "1", "甲"] and rows[3][0] == "3–4"
    # The draw is audited with its reason's hash, not the reason.
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        entry = connection.execute(select(AuditEntry).where(AuditEntry.action == "bracket.drawn")).one()  # type: ignore[arg-type]
        exported = export_event(connection, "stage-cup")
    engine.dispose()
    assert "reason_sha256" in entry.detail and "play-off" not in str(entry.detail)
    # Exported, the drawn knockout lists its players by seed and its games (play-offs numbered), and loads again.
    finals = parse_event(exported, Path(".")).sections[1]
    assert finals.knockout is not None and finals.knockout.seeds == [1, 2, 3, 4] and finals.knockout.qualify_from
    assert [p.name for p in finals.players] == ["甲", "丙", "戊", "丁"] and len(finals.pairings) == 10


@pytest.mark.asyncio
async def test_27_1_the_draw_waits_for_the_end_of_the_preliminaries(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path, event_file())
    chief = add_arbiter(settings, "Chief", "chief")
    await play(platform, "prelims", (1, 1, 1), 1, 2, 1)
    status, refused = await act(platform, chief, f"{EVENT}/sections/finals/bracket", {"reason": "draw"})
    assert status == 409 and "not over" in refused["message"]
    status, refused = await act(platform, chief, f"{EVENT}/sections/prelims/bracket", {"reason": "draw"})
    assert status == 409 and "not a knockout" in refused["message"]
    assert (await get(platform, f"{EVENT}/sections/finals/bracket", None)).status == 401


def test_27_1_an_event_file_knockout_is_checked() -> None:
    base = Path(".")
    with pytest.raises(EventFileError, match=r"faster than the section's own.*\(30\.4\)"):
        parse_event(event_file('play_off = ["15+5", "3+2"]'), base)
    with pytest.raises(EventFileError, match="1, 2, 3, 5 or 7"):
        parse_event(event_file().replace("games_per_match = 2", "games_per_match = 4"), base)
    with pytest.raises(EventFileError, match="qualify_from"):
        parse_event(event_file().replace('qualify_from = "prelims"', 'qualify_from = "finals"'), base)
    with pytest.raises(EventFileError, match="qualifiers"):
        parse_event(event_file().replace("qualifiers = 4", "qualifiers = 9"), base)
    spec = parse_event(event_file("third_place_match = true"), base)
    assert spec.sections[1].rounds == 2 and spec.sections[1].knockout is not None


LISTED = """
[event]
slug = "ko-cup"
name = "KO Cup"

[[sections]]
slug = "ko"
name = "Knockout"
rule = "freestyle"
time_control = "rapid-15"
system = "knockout"
seeds = [2, 1, 3]
{players}
{pairings}
"""


def listed(pairings: str) -> str:
    players = "".join(
        f'\n[[sections.players]]\nstart_no = {n}\nname = "K{n}"\nplatform_ref = "k{n}"\n' for n in (1, 2, 3)
    )
    return LISTED.format(players=players, pairings=pairings)


@pytest.mark.asyncio
async def test_28_4_a_listed_knockout_is_drawn_at_load_with_byes(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    # Three players: seed 1 (start number 2) has the bye; seeds 2 and 3 (1 and 3) play round 1.
    text = listed('[[sections.pairings]]\nround = 1\nboard = 2\nblack = 1\nwhite = 3\nresult = "0-1"\n')
    path = tmp_path / "ko.toml"
    path.write_text(text, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    chief = add_arbiter(settings, "Chief", "chief")
    response = await get(platform, "/api/v1/events/ko-cup/sections/ko/bracket", chief)
    body = await response.json()
    first = [m for m in body["matches"] if m["round"] == 1]
    assert first[0]["bye"] is True and first[1]["winner"]["name"] == "K3"
    final = next(m for m in body["matches"] if m["round"] == 2)
    assert final["next"]["black"]["name"] == "K2" and final["next"]["white"]["name"] == "K3"
    # A pairing that is no game of the bracket is refused at load.
    wrong = listed("[[sections.pairings]]\nround = 1\nboard = 1\nblack = 1\nwhite = 3\n")
    with pytest.raises(EventFileError, match=r"no game of the bracket|the bracket has"):
        parse_event(wrong, Path("."))
