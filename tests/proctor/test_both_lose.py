"""Both players lose (15.3): declared by the chief arbiter (16.3), reached by a second declared loss on a game the
other player already lost (never reversing the first), entered as a result (0-0), and scored 0 to each in the
standings and the exports; on the real app with signed webhooks."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from engine.records import read_psq
from engine.standings import ResultKind
from engine.trf import read_trf
from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter
from tests.proctor.test_review import get, load_event, settings  # noqa: F401  (the fixture)

pytestmark = pytest.mark.asyncio

SECTION = "/api/v1/events/review-cup/sections/open"


async def start(platform: Platformer, name: str, black: str, white: str) -> int:
    """A round-1 game of the review cup, both players seated and a stone on the board."""
    begin = int(time.time() * 1000) - 60_000
    data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "time_control": "rapid-15",
            "start_at": iso(begin)}  # fmt: skip
    status, body = await platform.send("game.created", name, data, at=begin - 60_000)
    assert status == 200, body
    for player in (black, white):
        await platform.send("player.joined", name, {"player": player}, at=begin - 30_000)
    await platform.send("move", name, {"point": "h8"}, at=begin + 5_000)
    game: int = body["game"]
    return game


async def action(platform: Platformer, token: str, game: int, body: dict[str, Any]) -> tuple[int, Any]:
    return await act(platform, token, f"/api/v1/games/{game}/actions", body)


async def test_15_3_a_second_declared_loss_makes_both_players_lose(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load_event(settings, tmp_path)
    chief = add_arbiter(settings, "Chief", "chief")
    game = await start(platform, "rc-r1-b1", "rc-1", "rc-3")
    reason = "uncivil language towards the opponent (chat log)"
    status, view = await action(platform, chief, game, {"action": "penalty", "player": "rc-1", "offence": "18.9",
                                                        "reason": reason})  # fmt: skip
    assert status == 200 and view["result"]["winner"] == "white", view
    status, view = await action(platform, chief, game, {"action": "penalty", "player": "rc-3", "offence": "18.9",
                                                        "reason": reason})  # fmt: skip
    assert status == 200, view
    # Not "Black wins": both players lose (15.3).
    assert view["result"]["double_loss"] is True and view["result"]["winner"] is None
    assert "15.3" in view["result"]["article"]

    other = await start(platform, "rc-r1-b2", "rc-4", "rc-2")
    await platform.send("resign", "rc-r1-b2", {"player": "rc-2"}, at=int(time.time() * 1000))
    body = await (await get(platform, f"{SECTION}/standings?round=1", chief)).json()
    assert {r["start_no"]: r["points"] for r in body["rows"]} == {1: "0", 2: "0", 3: "0", 4: "1"}
    board = {(p["round"], p["board"]): p for p in body["pairings"]}
    assert board[1, 1]["result"] == "0-0" and board[1, 1]["source"] == "game"
    rows = list(csv.reader(io.StringIO(await (await get(platform, f"{SECTION}/standings.csv?round=1", chief)).text())))
    cells = {row[1]: row[8] for row in rows[1:]}
    assert cells["1"] == "3w0" and cells["3"] == "1b0"
    trf = read_trf(await (await get(platform, f"{SECTION}/standings.trf?round=1", chief)).text()).tournament
    assert trf.entrant(1).rounds[0].kind is ResultKind.LOSS and trf.entrant(3).rounds[0].kind is ResultKind.LOSS
    # PSQ and RIF have no "both lose": the record is written without a winner.
    psq = await get(platform, f"/api/v1/games/{game}/record.psq", chief)
    record = read_psq(await psq.text())
    assert psq.status == 200 and record.tokens == ["h8"] and record.result is None
    assert other != game

    engine = create_database_engine(settings)
    with engine.connect() as connection:
        audited = connection.execute(
            select(col(AuditEntry.action), col(AuditEntry.detail))
            .where(col(AuditEntry.subject) == f"game:{game}")
            .order_by(col(AuditEntry.id))
        ).all()
    engine.dispose()
    verdicts = [detail for kind, detail in audited if kind == "game.verdict"]
    assert "white wins" in verdicts[0]["text"]
    assert "both players lose" in verdicts[-1]["text"] and "15.3" in verdicts[-1]["article"]


async def test_15_3_the_chief_declares_both_players_lost(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load_event(settings, tmp_path)
    chief, deputy = add_arbiter(settings, "Chief", "chief"), add_arbiter(settings, "Deputy", "deputy-chief")
    game = await start(platform, "rc-r1-b1", "rc-1", "rc-3")
    declare = {"action": "declare-result", "both_lose": True, "reason": "both consulted an engine (15.3)"}
    status, body = await action(platform, deputy, game, declare)
    assert status == 403 and body["article"] == "16.3", body
    for bad in ({**declare, "both_lose": "yes"}, {**declare, "winner": "rc-1"}):
        status, body = await action(platform, chief, game, bad)
        assert status == 400, body
    status, view = await action(platform, chief, game, declare)
    assert status == 200 and view["result"]["double_loss"] is True and view["result"]["article"] == "15.3, 16.3"


async def test_15_3_a_both_lose_result_is_entered_as_0_0(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load_event(settings, tmp_path)
    deputy = add_arbiter(settings, "Deputy", "deputy-chief")
    entry = {"round": 2, "board": 1, "result": "0-0", "reason": "both players declared lost (report 4)"}
    status, body = await act(platform, deputy, f"{SECTION}/results", entry)
    assert status == 201 and body["result"] == "0-0" and body["previous"] == "½-½", body
    for name in ("rc-r1-b1", "rc-r1-b2"):
        await start(platform, name, *(("rc-1", "rc-3") if name.endswith("b1") else ("rc-4", "rc-2")))
    await platform.send("resign", "rc-r1-b1", {"player": "rc-3"}, at=int(time.time() * 1000))
    await platform.send("resign", "rc-r1-b2", {"player": "rc-2"}, at=int(time.time() * 1000))
    body = await (await get(platform, f"{SECTION}/standings", deputy)).json()
    # Round 2 board 1 (2 against 1) scores 0 to each; round 2 board 2 stays 1-0 for player 3.
    assert {r["start_no"]: r["points"] for r in body["rows"]} == {1: "1", 2: "0", 3: "1", 4: "1"}
