"""Technical appeals (22) through the API: lodged by a team leader or coach with a deposit, voted on by the
committee, decided by majority, the deposit returned, half returned or forfeited; all audited."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter, bearer, started_game
from tests.proctor.test_review import EVENT

pytestmark = pytest.mark.asyncio


def appeal_body(game: int, **changes: Any) -> dict[str, Any]:
    """A written appeal by a team leader, with a deposit of 500 CNY (22.1)."""
    body = {
        "game": game,
        "filed_by": {"name": "陈领队", "capacity": "team-leader", "team": "杭州"},
        "grounds": "The arbiter ruled the flag fell, but the platform's clock showed time left.",
        "deposit": {"amount": 500, "currency": "CNY"},
    }
    return body | changes


async def committee(settings: Settings, size: int) -> list[str]:
    return [add_arbiter(settings, f"委员{n}", "appeals-committee") for n in range(1, size + 1)]


async def test_an_appeal_is_upheld_by_majority_and_its_deposit_returned(
    platform: Platformer, settings: Settings
) -> None:
    arbiter = add_arbiter(settings, "Li", "arbiter")
    members = await committee(settings, 3)
    game = await started_game(platform, "ap1")
    status, appeal = await act(platform, arbiter, "/api/v1/appeals", appeal_body(game))
    assert status == 201
    assert (appeal["status"], appeal["article"], appeal["filed_by"]["capacity"]) == ("open", "22", "team-leader")
    assert appeal["deposit"] == {"amount": "500", "currency": "CNY", "article": "22.1, 22.2", "outcome": None,
                                 "returned": None}  # fmt: skip
    assert appeal["recorded_by"] == {"name": "Li", "role": "arbiter", "article": "22.1"}
    votes = f"/api/v1/appeals/{appeal['id']}/votes"
    decision = f"/api/v1/appeals/{appeal['id']}/decision"
    status, body = await act(platform, members[0], votes, {"vote": "uphold", "note": "the platform's log agrees"})
    assert status == 201 and body["tally"] == {"uphold": 1, "reject": 0}
    status, body = await act(platform, members[0], votes, {"vote": "reject"})
    assert (status, body["article"]) == (409, "22.2")  # one vote each
    status, body = await act(platform, members[1], decision, {})
    assert (status, body["error"], body["article"]) == (409, "no-majority", "22.2")  # 1 of 3 is no majority
    status, body = await act(platform, members[1], votes, {"vote": "uphold"})
    assert status == 201
    status, decided = await act(platform, members[2], decision, {"note": "upheld: the flag had not fallen"})
    assert status == 201
    assert decided["status"] == "upheld"
    assert decided["decision"] | {"at": 0} == {
        "outcome": "upheld", "uphold": 2, "reject": 0, "committee": 3, "by": "委员3", "role": "appeals-committee",
        "note": "upheld: the flag had not fallen", "at": 0, "article": "22.2",
    }  # fmt: skip
    assert (decided["deposit"]["outcome"], decided["deposit"]["returned"]) == ("returned", "500")
    status, body = await act(platform, members[2], votes, {"vote": "reject"})
    assert status == 409  # decided: final
    status, body = await act(platform, members[2], decision, {})
    assert status == 409
    assert (await platform.client.get(f"/api/v1/appeals/{appeal['id']}", headers=bearer(arbiter))).status == 200
    listed = await (await platform.client.get("/api/v1/appeals?status=upheld", headers=bearer(arbiter))).json()
    assert [a["id"] for a in listed] == [appeal["id"]]
    assert await (await platform.client.get("/api/v1/appeals?status=open", headers=bearer(arbiter))).json() == []
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        actions = connection.execute(
            select(col(AuditEntry.action), col(AuditEntry.detail)).where(
                col(AuditEntry.subject) == f"appeal:{appeal['id']}"
            )
        ).all()
        assert verify_audit(connection).ok
    engine.dispose()
    assert [a for a, _ in actions] == ["appeal.filed", "appeal.vote", "appeal.vote", "appeal.decided"]
    assert actions[0][1]["article"] == "22.1" and "陈领队" not in str(actions) and "flag" not in str(actions)
    assert actions[-1][1]["deposit"] == {"outcome": "returned", "returned": "500", "article": "22.1, 22.2"}


async def test_a_rejected_appeal_forfeits_its_deposit_or_half_of_it(platform: Platformer, settings: Settings) -> None:
    arbiter = add_arbiter(settings, "Li", "arbiter")
    members = await committee(settings, 3)
    game = await started_game(platform, "ap2")
    outcomes = []
    for basis in (False, True):
        _, appeal = await act(platform, arbiter, "/api/v1/appeals",
                              appeal_body(game, deposit={"amount": "200.50", "currency": "CNY"}))  # fmt: skip
        for member in members[:2]:
            await act(platform, member, f"/api/v1/appeals/{appeal['id']}/votes", {"vote": "reject"})
        status, decided = await act(platform, members[0], f"/api/v1/appeals/{appeal['id']}/decision",
                                    {"reasonable_basis": basis})  # fmt: skip
        assert status == 201 and decided["status"] == "rejected"
        outcomes.append((decided["deposit"]["outcome"], decided["deposit"]["returned"]))
    assert outcomes == [("forfeited", "0"), ("half-returned", "100.25")]
    _, upheld = await act(platform, arbiter, "/api/v1/appeals", appeal_body(game))
    for member in members[:2]:
        await act(platform, member, f"/api/v1/appeals/{upheld['id']}/votes", {"vote": "uphold"})
    status, body = await act(platform, members[0], f"/api/v1/appeals/{upheld['id']}/decision",
                             {"reasonable_basis": True})  # fmt: skip
    assert (status, body["article"]) == (400, "22.1, 22.2")  # a reasonable basis matters only for an appeal that fails


async def test_22_2_a_committee_of_an_even_number_or_fewer_than_three_does_not_rule(
    platform: Platformer, settings: Settings
) -> None:
    """22.2: an odd number of members, at least 3: with 2 (a tie possible) no vote is taken, nor with 1."""
    arbiter = add_arbiter(settings, "Li", "arbiter")
    members = await committee(settings, 2)
    game = await started_game(platform, "ap3")
    _, appeal = await act(platform, arbiter, "/api/v1/appeals", appeal_body(game))
    status, body = await act(platform, members[0], f"/api/v1/appeals/{appeal['id']}/votes", {"vote": "uphold"})
    assert (status, body["article"]) == (409, "22.2")
    assert "odd number of members, at least 3" in body["message"]
    status, body = await act(platform, members[0], f"/api/v1/appeals/{appeal['id']}/decision", {})
    assert (status, body["article"]) == (409, "22.2")
    members.append(add_arbiter(settings, "委员3", "appeals-committee"))
    status, _ = await act(platform, members[0], f"/api/v1/appeals/{appeal['id']}/votes", {"vote": "uphold"})
    assert status == 201  # three members: the committee rules


async def test_who_may_lodge_vote_and_decide(platform: Platformer, settings: Settings) -> None:
    arbiter = add_arbiter(settings, "Li", "arbiter")
    chief = add_arbiter(settings, "Chief", "chief")
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    member, *_ = await committee(settings, 3)
    game = await started_game(platform, "ap4")
    status, _ = await act(platform, reviewer, "/api/v1/appeals", appeal_body(game))
    assert status == 403  # the review panel reads only
    status, body = await act(platform, arbiter, "/api/v1/appeals",
                             appeal_body(game, filed_by={"name": "A player", "capacity": "player"}))  # fmt: skip
    assert (status, body["article"]) == (400, "22.1")  # only a team leader or coach
    for bad in (
        {"deposit": {"amount": 0, "currency": "CNY"}},
        {"deposit": {"amount": 5, "currency": "yuan"}},
        {"deposit": None},
        {"grounds": " "},
        {"game": None},
        {"game": "ap4"},
    ):
        status, _ = await act(platform, arbiter, "/api/v1/appeals", appeal_body(game) | bad)
        assert status == 400, bad
    status, _ = await act(platform, arbiter, "/api/v1/appeals", appeal_body(999))
    assert status == 404
    status, raised = await act(platform, arbiter, "/api/v1/incidents",
                               {"game": game, "kind": "clock-mismatch", "summary": "flag disputed"})  # fmt: skip
    status, appeal = await act(platform, chief, "/api/v1/appeals", {**appeal_body(game), "game": None,
                                                                    "incident": raised["id"]})  # fmt: skip
    assert status == 201 and (appeal["game"], appeal["incident"]) == (game, raised["id"])
    status, _ = await act(platform, arbiter, "/api/v1/appeals", {**appeal_body(game + 1), "incident": raised["id"]})
    assert status == 400  # the incident is about another game
    votes = f"/api/v1/appeals/{appeal['id']}/votes"
    for token in (arbiter, chief):
        status, body = await act(platform, token, votes, {"vote": "uphold"})
        assert (status, body["article"]) == (403, "22.2")
        status, body = await act(platform, token, f"/api/v1/appeals/{appeal['id']}/decision", {})
        assert (status, body["article"]) == (403, "22.2")
    status, _ = await act(platform, reviewer, votes, {"vote": "uphold"})
    assert status == 403
    status, _ = await act(platform, member, votes, {"vote": "maybe"})
    assert status == 400
    status, body = await act(platform, member, "/api/v1/incidents",
                             {"game": game, "kind": "clock-mismatch", "summary": "x"})  # fmt: skip
    assert (status, body["article"]) == (403, "22.2")  # the committee acts on appeals only
    status, _ = await act(platform, member, "/api/v1/appeals/999/votes", {"vote": "uphold"})
    assert status == 404
    status, body = await act(platform, member, votes, {"vote": "reject"})
    assert status == 201
    listed = await (await platform.client.get(f"/api/v1/appeals?game={game}", headers=bearer(reviewer))).json()
    assert [a["id"] for a in listed] == [appeal["id"]]  # the review panel reads
    response = await platform.client.get("/api/v1/appeals/999", headers=bearer(reviewer))
    assert response.status == 404
    response = await platform.client.get("/api/v1/appeals?status=pending", headers=bearer(reviewer))
    assert response.status == 400
    for path in ("/api/v1/appeals", votes, f"/api/v1/appeals/{appeal['id']}/decision"):
        assert (await platform.client.post(path, json={"vote": "uphold"})).status == 401
    assert (await platform.client.get("/api/v1/appeals")).status == 401


async def test_14_9_an_appeal_after_the_rounds_deadline_is_refused_unless_the_chief_accepts_it_late(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    """The event allows 30 minutes after the end of the round (``appeal_deadline_minutes``); round 1's two games
    ended 90 and 60 minutes ago, so an appeal now is late: refused with the round's end in the event's zone, unless
    the chief arbiter (or a deputy) accepts it late, saying why (a delay caused by the organiser), which is audited.
    While a game of the round is still on, the round has not ended and no deadline runs."""
    path = tmp_path / "review-cup.toml"
    path.write_text(EVENT.replace('time_zone = "Asia/Shanghai"', 'time_zone = "Asia/Shanghai"\n'
                                  "appeal_deadline_minutes = 30", 1), encoding="utf-8")  # fmt: skip
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    arbiter, chief = add_arbiter(settings, "Li", "arbiter"), add_arbiter(settings, "Chief", "chief")
    now = int(time.time() * 1000)
    begin = now - 2 * 3_600_000
    games = {}
    for name, black, white in (("rc-r1-b1", "rc-1", "rc-3"), ("rc-r1-b2", "rc-4", "rc-2")):
        data = {
            "black": {"id": black},
            "white": {"id": white},
            "rule": "renju",
            "start_at": iso(begin),
            "time_control": {"initial_s": 4 * 3600, "increment_s": 0},
        }  # fmt: skip  (no flag falls meanwhile)
        status, body = await platform.send("game.created", name, data, at=begin - 60_000)
        assert status == 200, body
        games[name] = body["game"]
        for player in (black, white):
            await platform.send("player.joined", name, {"player": player}, at=begin - 30_000)
        await platform.send("move", name, {"point": "h8"}, at=begin + 5_000)
    await platform.send("resign", "rc-r1-b1", {"player": "rc-3"}, at=now - 90 * 60_000)
    status, _ = await act(platform, arbiter, "/api/v1/appeals", appeal_body(games["rc-r1-b1"]))
    assert status == 201  # board 2 is still on: the round has not ended
    await platform.send("resign", "rc-r1-b2", {"player": "rc-2"}, at=now - 60 * 60_000)
    status, body = await act(platform, arbiter, "/api/v1/appeals", appeal_body(games["rc-r1-b1"]))
    assert (status, body["article"]) == (409, "14.9"), body
    ended = datetime.fromtimestamp((now - 60 * 60_000) / 1000, ZoneInfo("Asia/Shanghai")).strftime("%H:%M:%S")
    assert "round 1 ended at " in body["message"] and f"{ended} Asia/Shanghai" in body["message"]
    assert body["deadline_ms"] == now - 30 * 60_000
    late = appeal_body(games["rc-r1-b1"], late_accepted="the venue's network was down until 11:00 (organiser)")
    status, body = await act(platform, arbiter, "/api/v1/appeals", late)
    assert (status, body["article"]) == (403, "14.9")  # an arbiter may not accept it late
    status, body = await act(platform, chief, "/api/v1/appeals", late)
    assert status == 201, body
    with engine.connect() as connection:
        entry = connection.execute(
            select(AuditEntry).where(col(AuditEntry.action) == "appeal.filed").order_by(col(AuditEntry.id).desc())
        ).first()
        assert entry is not None and entry.detail["late"]["deadline_ms"] == now - 30 * 60_000
        assert "network" not in json.dumps(entry.detail)  # the reason's hash only
        assert verify_audit(connection).ok
    engine.dispose()
