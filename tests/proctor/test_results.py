"""A section's standings as JSON (the CSV's figures) and the results entry (28; the chief's authority, 16), on the
real app with signed webhooks."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter
from tests.proctor.test_review import get, load_event, settings  # noqa: F401  (the fixture)

pytestmark = pytest.mark.asyncio

SECTION = "/api/v1/events/review-cup/sections/open"
GAMES = {"rc-r1-b1": ("rc-1", "rc-3", "rc-3"), "rc-r1-b2": ("rc-4", "rc-2", "rc-4")}
"""Round 1's games on the platform: black, white, the player who resigns."""


async def play_round_one(platform: Platformer) -> None:
    start = int(time.time() * 1000) - 60_000
    for name, (black, white, loser) in GAMES.items():
        data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "time_control": "rapid-15",
                "start_at": iso(start)}  # fmt: skip
        await platform.send("game.created", name, data, at=start - 60_000)
        for player in (black, white):
            await platform.send("player.joined", name, {"player": player}, at=start - 30_000)
        await platform.send("move", name, {"point": "h8"}, at=start + 5_000)
        await platform.send("resign", name, {"player": loser}, at=start + 9_000)


async def standings(platform: Platformer, token: str, query: str = "") -> dict[str, Any]:
    response = await get(platform, f"{SECTION}/standings{query}", token)
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def csv_rows(platform: Platformer, token: str, query: str = "") -> list[list[str]]:
    response = await get(platform, f"{SECTION}/standings.csv{query}", token)
    return list(csv.reader(io.StringIO(await response.text())))


def as_csv(body: dict[str, Any]) -> list[list[str]]:
    return [[str(r["place"]), str(r["start_no"]), r["name"], r["team"], str(r["rating"] or ""), r["points"],
             *(r["tiebreaks"][name] or "" for name in body["tiebreaks"])] for r in body["rows"]]  # fmt: skip


async def test_the_standings_as_json_match_the_csv(platform: Platformer, settings: Settings, tmp_path: Path) -> None:  # noqa: F811
    load_event(settings, tmp_path)
    token = add_arbiter(settings, "Panel", "reviewer")
    await play_round_one(platform)
    body = await standings(platform, token)
    assert body["round"] == 2 and body["complete"] == 2 and body["tiebreaks"] == ["BH", "WIN"]
    rows = await csv_rows(platform, token)
    assert as_csv(body) == [row[:8] for row in rows[1:]]
    assert body["rows"][0] == {"place": 1, "start_no": 1, "name": "王小明", "team": "杭州", "rating": 2100,
                               "points": "1.5", "tiebreaks": {"BH": "2.5", "WIN": "1"}}  # fmt: skip
    after_one = await standings(platform, token, "?round=1")
    assert after_one["round"] == 1 and as_csv(after_one) == [
        row[:8] for row in (await csv_rows(platform, token, "?round=1"))[1:]
    ]
    board = {(p["round"], p["board"]): p for p in body["pairings"]}
    assert board[1, 1]["result"] == "1-0" and board[1, 1]["source"] == "game" and board[1, 1]["linked"]
    assert board[2, 2]["result"] == "1-0" and board[2, 2]["source"] == "entered"
    assert (await get(platform, f"{SECTION}/standings?round=3", token)).status == 409
    assert (await get(platform, "/api/v1/events/review-cup/sections/nope/standings", token)).status == 404
    assert (await platform.client.get(f"{SECTION}/standings")).status == 401


async def test_results_entry(platform: Platformer, settings: Settings, tmp_path: Path) -> None:  # noqa: F811
    load_event(settings, tmp_path)
    chief, deputy = add_arbiter(settings, "Chief", "chief"), add_arbiter(settings, "Deputy", "deputy-chief")
    floor, panel = add_arbiter(settings, "Floor", "arbiter"), add_arbiter(settings, "Panel", "reviewer")
    path = f"{SECTION}/results"
    # Round 1 has no result yet: the standings stop at round 0.
    assert (await standings(platform, chief))["complete"] == 0
    entry = {"round": 2, "board": 2, "result": "+-", "reason": "player 4 did not arrive (scoresheet)"}
    for token in (floor, panel):
        status, body = await act(platform, token, path, entry)
        assert status == 403, body
    status, body = await act(platform, floor, path, entry)
    assert body["article"] == "16"
    for bad in ({**entry, "result": "2-0"}, {**entry, "reason": " "}, {**entry, "board": "two"}):
        status, body = await act(platform, deputy, path, bad)
        assert status == 400, bad
    status, _ = await act(platform, deputy, path, {**entry, "board": 9})
    assert status == 404
    status, body = await act(platform, deputy, path, entry)
    assert status == 201 and body["result"] == "+-" and body["previous"] == "1-0" and body["article"] == "28"

    await play_round_one(platform)
    before = await standings(platform, chief)
    assert before["complete"] == 2
    assert [(r["start_no"], r["points"]) for r in before["rows"]][:2] == [(1, "1.5"), (2, "1.5")]
    assert (await csv_rows(platform, chief))[3][9] == "+4"  # player 3's round 2: a forfeit win (28.3)

    # The service's verdict on board 1 is 1-0: a different result needs the chief's override.
    correction = {"round": 1, "board": 1, "result": "0.5-0.5", "reason": "the arbiter's report: a draw was agreed"}
    status, body = await act(platform, deputy, path, correction)
    assert status == 409 and body["verdict"] == "1-0" and body["article"] == "16"
    status, body = await act(platform, deputy, path, {**correction, "override": True})
    assert status == 403
    status, body = await act(platform, chief, path, {**correction, "override": True})
    assert status == 201 and body["override"] is True and body["result"] == "½-½" and body["previous"] is None
    after = await standings(platform, chief)
    points = {r["start_no"]: r["points"] for r in after["rows"]}
    assert points == {1: "1", 2: "1.5", 3: "1.5", 4: "0"}
    assert after["rows"][0]["start_no"] in (2, 3)
    board = {(p["round"], p["board"]): p for p in after["pairings"]}
    assert board[1, 1]["result"] == "½-½" and board[1, 1]["source"] == "entered" and board[1, 1]["game_result"] == "1-0"
    # Agreeing with the verdict needs no override.
    status, _ = await act(platform, deputy, path, {**correction, "result": "1-0", "reason": "back to the verdict"})
    assert status == 201

    engine = create_database_engine(settings)
    with engine.connect() as connection:
        entries = connection.execute(
            select(col(AuditEntry.actor), col(AuditEntry.detail))
            .where(col(AuditEntry.action) == "pairing.result")
            .order_by(col(AuditEntry.id))
        ).all()
    engine.dispose()
    assert [(actor, d["round"], d["board"], d["old"], d["new"], d["override"]) for actor, d in entries] == [
        ("Deputy (deputy-chief)", 2, 2, "1-0", "+/-", False),
        ("Chief (chief)", 1, 1, "", "½-½", True),
        ("Deputy (deputy-chief)", 1, 1, "½-½", "1-0", False),
    ]
    assert entries[1][1]["reason"] == "the arbiter's report: a draw was agreed"
    report = await (await get(platform, "/api/v1/audit/verify", chief)).json()
    assert report["ok"] is True, report
    status, body = await act(platform, chief, path, {"round": 1, "board": 3, "result": "1-0", "reason": "x"})
    assert status == 404
