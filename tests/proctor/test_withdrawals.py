"""Withdrawals (24.4) through the API and into the standings: in a round robin a player who withdrew at half the
games keeps their results and forfeits the rest (24.4.2), one who withdrew before half has every result annulled;
in a Swiss the results stand and a pairing made anyway is a forfeit (24.4.3).  Recorded by the chief arbiter, a
deputy or the organising committee with written reasons (24.1.2), once, sealed and audited."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.cli import main as proctor_main
from proctor.database import create_database_engine, migrate
from proctor.events import load_event_file
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.browser.test_dashboard import LI_TOKEN, WANG_TOKEN, serve
from tests.browser.test_dashboard import add_arbiter as add_account
from tests.proctor.conftest import Platformer, register_platform
from tests.proctor.test_arbiters import act, add_arbiter, bearer

pytestmark = pytest.mark.asyncio

PLAYERS = "".join(f'\n[[sections.players]]\nstart_no = {n}\nname = "Player {n}"\n' for n in range(1, 5))


def event(system: str, pairings: list[tuple[int, int, int, int, str]]) -> str:
    """A four-player section of three rounds; each pairing (round, board, black, white, result or "")."""
    rows = "".join(
        f"\n[[sections.pairings]]\nround = {r}\nboard = {b}\nblack = {black}\nwhite = {white}\n"
        + (f'result = "{result}"\n' if result else "")
        for r, b, black, white, result in pairings
    )
    return (f'[event]\nslug = "wd"\nname = "Withdrawal Cup"\n\n[[sections]]\nslug = "open"\nname = "Open"\n'
            f'rule = "renju"\ntime_control = "rapid-15"\nsystem = "{system}"\nrounds = 3\n'
            f'tiebreaks = "PTS"\n{PLAYERS}{rows}')  # fmt: skip


def load(settings: Settings, tmp_path: Path, text: str) -> None:
    path = tmp_path / "wd.toml"
    path.write_text(text, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def standings(platform: Platformer, token: str, through: int | None = None) -> tuple[int, Any]:
    query = f"?round={through}" if through else ""
    response = await platform.client.get(f"/api/v1/events/wd/sections/open/standings{query}", headers=bearer(token))
    return response.status, await response.json()


async def withdraw(platform: Platformer, token: str, start_no: int, after: int) -> tuple[int, Any]:
    body = {"start_no": start_no, "after_round": after, "reason": "ill since round 2, with the doctor's note"}
    return await act(platform, token, "/api/v1/events/wd/sections/open/withdrawals", body)


def points(body: dict[str, Any]) -> dict[int, str]:
    return {row["start_no"]: row["points"] for row in body["rows"]}


async def test_24_4_2_a_withdrawal_at_half_the_games_keeps_the_results_and_forfeits_the_rest(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path, event("round-robin", [
        (1, 1, 1, 4, "1-0"), (1, 2, 2, 3, "½-½"), (2, 1, 4, 3, "1-0"), (2, 2, 1, 2, "0-1"),
        (3, 1, 2, 4, ""), (3, 2, 3, 1, "1-0"),
    ]))  # fmt: skip
    chief, arbiter = add_arbiter(settings, "Chief", "chief"), add_arbiter(settings, "Li", "arbiter")
    status, body = await standings(platform, chief, 3)
    assert status == 409 and "round 3 board 1" in body["message"]  # player 4's last game has no result
    status, body = await withdraw(platform, arbiter, 4, 2)
    assert (status, body["article"]) == (403, "24.4")  # an arbiter does not record it
    status, body = await withdraw(platform, chief, 4, 2)
    assert status == 201, body
    assert (body["name"], body["after_round"], body["article"]) == ("Player 4", 2, "24.4")
    status, body = await standings(platform, chief)
    assert status == 200 and body["round"] == 3, body
    assert points(body) == {1: "1", 2: "2.5", 3: "1.5", 4: "1"}  # 2 won round 3 by forfeit (+), 4 lost it (-)
    assert body["withdrawals"] == [{"start_no": 4, "name": "Player 4", "after_round": 2, "article": "24.4"}]
    status, body = await withdraw(platform, chief, 4, 2)
    assert status == 409  # once
    for bad in ({"start_no": 9, "after_round": 1}, {"start_no": 3, "after_round": 3}, {"start_no": 3}):
        status, _ = await act(platform, chief, "/api/v1/events/wd/sections/open/withdrawals",
                              {**bad, "reason": "x"})  # fmt: skip
        assert status in (400, 404), bad
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        entry = connection.execute(select(AuditEntry).where(col(AuditEntry.action) == "player.withdrawn")).one()
        assert entry.detail["article"] == "24.4" and "doctor" not in json.dumps(entry.detail)
        assert verify_audit(connection).ok
    engine.dispose()


async def test_24_4_2_a_withdrawal_before_half_the_games_annuls_every_result(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path, event("round-robin", [
        (1, 1, 1, 4, "1-0"), (1, 2, 2, 3, "½-½"), (2, 1, 4, 3, ""), (2, 2, 1, 2, "0-1"),
        (3, 1, 2, 4, ""), (3, 2, 3, 1, "1-0"),
    ]))  # fmt: skip
    committee = add_arbiter(settings, "OC", "committee")
    status, body = await withdraw(platform, committee, 4, 1)
    assert status == 201, body
    status, body = await standings(platform, committee)
    assert status == 200 and body["round"] == 3, body
    assert points(body) == {1: "0", 2: "1.5", 3: "1.5"}  # player 4 and every game against them are gone


async def test_24_4_3_in_a_swiss_the_results_stand_and_a_later_pairing_is_a_forfeit(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load(settings, tmp_path, event("swiss", [
        (1, 1, 1, 4, "0-1"), (1, 2, 2, 3, "1-0"), (2, 1, 4, 2, ""), (2, 2, 3, 1, "½-½"),
    ]))  # fmt: skip
    chief = add_arbiter(settings, "Chief", "chief")
    status, _ = await withdraw(platform, chief, 4, 1)
    assert status == 201
    status, body = await standings(platform, chief, 2)
    assert status == 200, body
    assert points(body) == {1: "0.5", 2: "2", 3: "0.5", 4: "1"}  # 4's round-1 win stands; round 2 forfeited to 2


async def test_24_4_a_withdrawal_from_the_command_line_goes_through_the_running_service(tmp_path: Path) -> None:
    """``proctor event withdraw`` is a client of the running service's route (the audit chain has one writer): the
    chief's token records it; an arbiter's is refused with the route's words and an exit status of 1."""
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"))
    add_account(settings, "Li", "chief", LI_TOKEN)
    add_account(settings, "Wang", "arbiter", WANG_TOKEN)
    load(settings, tmp_path, event("swiss", [(1, 1, 1, 2, "1-0"), (1, 2, 3, 4, "0-1")]))
    async with serve(settings, secret) as served:
        args = ["event", "withdraw", "wd", "open", "3", "--after-round", "1", "--reason", "a family emergency",
                "--url", served.base]  # fmt: skip
        refused = await asyncio.to_thread(proctor_main, [*args, "--token", WANG_TOKEN])
        recorded = await asyncio.to_thread(proctor_main, [*args, "--token", LI_TOKEN])
        response = await served.http.get(f"{served.base}/api/v1/events/wd/sections/open/standings",
                                         headers={"Authorization": f"Bearer {LI_TOKEN}"})  # fmt: skip
        standings = await response.json()
    assert (refused, recorded) == (1, 0)
    assert standings["withdrawals"] == [{"start_no": 3, "name": "Player 3", "after_round": 1, "article": "24.4"}]
