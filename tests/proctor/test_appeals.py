"""Technical appeals (22) through the API: lodged by a team leader or coach with a deposit, voted on by the
committee, decided by majority, the deposit returned, half returned or forfeited; all audited."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import act, add_arbiter, bearer, started_game

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
    return [add_arbiter(settings, f"委员{n}", "committee") for n in range(1, size + 1)]


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
        "outcome": "upheld", "uphold": 2, "reject": 0, "committee": 3, "by": "委员3", "role": "committee",
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


async def test_a_tied_committee_cannot_decide(platform: Platformer, settings: Settings) -> None:
    arbiter = add_arbiter(settings, "Li", "arbiter")
    members = await committee(settings, 2)
    game = await started_game(platform, "ap3")
    _, appeal = await act(platform, arbiter, "/api/v1/appeals", appeal_body(game))
    for member, choice in zip(members, ("uphold", "reject"), strict=True):
        await act(platform, member, f"/api/v1/appeals/{appeal['id']}/votes", {"vote": choice})
    status, body = await act(platform, members[0], f"/api/v1/appeals/{appeal['id']}/decision", {})
    assert (status, body["error"], body["article"]) == (409, "tie", "22.2")
    assert body["uphold"] == body["reject"] == 1


async def test_who_may_lodge_vote_and_decide(platform: Platformer, settings: Settings) -> None:
    arbiter = add_arbiter(settings, "Li", "arbiter")
    chief = add_arbiter(settings, "Chief", "chief")
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    (member,) = await committee(settings, 1)
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
