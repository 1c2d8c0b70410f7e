"""The camera roster (issue 13, 36): the pure fold of a player's state, the links of a whole section issued at once
(JSON and CSV, each audited), one link re-issued (the old one refused), and who may read and issue (16)."""

from __future__ import annotations

import csv
import io
from typing import Any

from sqlalchemy import func, insert, select
from sqlmodel import col

from proctor.account_log import record_account
from proctor.accounts import token_hash
from proctor.audit import verify_audit
from proctor.camera_roster import (
    Entrant,
    LinkRow,
    RosterState,
    StreamSnapshot,
    Which,
    links_csv,
    roster_state,
    to_issue,
)
from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.models import Arbiter, AuditEntry, StreamToken
from proctor.settings import Settings
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer
from tests.proctor.test_events import EXAMPLE

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform
EVENT = "national-youth-2021"
MEN = f"/api/v1/events/{EVENT}/sections/youth-m"
WOMEN = f"/api/v1/events/{EVENT}/sections/youth-f"
NOW = 1_000_000


def test_the_state_comes_from_the_live_stream_first_then_the_link() -> None:
    working, replaced = LinkRow(1, None, NOW + 1), LinkRow(1, 5, NOW + 1)
    expired = LinkRow(1, None, NOW)
    assert roster_state([], None, NOW) is RosterState.NO_LINK
    assert roster_state([replaced, expired], None, NOW) is RosterState.NO_LINK
    assert roster_state([replaced, working], None, NOW) is RosterState.NOT_CONNECTED
    assert roster_state([working], StreamSnapshot(True, 1), NOW) is RosterState.CONNECTED
    assert roster_state([working], StreamSnapshot(True, 1, frozen=True), NOW) is RosterState.FROZEN
    assert roster_state([working], StreamSnapshot(True, 1, degraded=True), NOW) is RosterState.DEGRADED
    assert roster_state([working], StreamSnapshot(False, 1, 2), NOW) is RosterState.LOST
    assert roster_state([], StreamSnapshot(False, 1, 2), NOW) is RosterState.LOST  # it did connect


def test_an_issue_for_the_missing_leaves_working_links_and_players_without_an_id() -> None:
    people = [Entrant("b", "乙", 2), Entrant("", "No Id", 3), Entrant("a", "甲", 1)]
    links = {"a": [LinkRow(1, None, NOW + 1)]}
    chosen, skipped = to_issue(people, links, Which.MISSING, NOW)
    assert [e.ref for e in chosen] == ["b"]
    assert skipped == [{"name": "甲", "start_no": 1, "reason": "has-working-link"},
                       {"name": "No Id", "start_no": 3, "reason": "no-platform-id"}]  # fmt: skip
    chosen, _ = to_issue(people, links, Which.ALL, NOW)
    assert [e.ref for e in chosen] == ["a", "b"]


def test_the_csv_names_the_zone_and_neutralises_formulas() -> None:
    rows = [{"player": "p1", "name": "=HYPERLINK(1)", "start_no": 1, "team": "杭州", "round": 1, "board": 2,
             "link": "http://x/play/t", "expires": 0}]  # fmt: skip
    read = list(csv.reader(io.StringIO(links_csv(rows, "Asia/Shanghai"))))
    assert read[0] == ["start_no", "name", "team", "round", "board", "player_id", "link", "expires (Asia/Shanghai)"]
    assert read[1] == ["1", "'=HYPERLINK(1)", "杭州", "1", "2", "p1", "http://x/play/t", "1970-01-01 08:00:00"]


def arbiters(settings: Settings) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
        for name, role, sections in (("Wang", "arbiter", [f"{EVENT}/youth-m"]),
                                     ("Zhao", "arbiter", [f"{EVENT}/youth-m/2"]),
                                     ("Li", "chief", None), ("Reader", "reviewer", None)):  # fmt: skip
            connection.execute(insert(Arbiter).values(
                name=name, role=role, token_hash=token_hash(name), sections=sections
            ))  # fmt: skip
            record_account(connection, name, "test", "added", 0)  # as proctor arbiter add does
    engine.dispose()


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}"}


def count(settings: Settings, table: Any, where: Any = None) -> int:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        query = select(func.count()).select_from(table)
        n = connection.execute(query if where is None else query.where(where)).scalar_one()
    engine.dispose()
    return int(n)


async def roster(platform: Platformer, who: str, base: str = MEN) -> tuple[int, Any]:
    response = await platform.client.get(f"{base}/camera-roster", headers=bearer(who))
    return response.status, await response.json()


async def issue(platform: Platformer, who: str, body: Any, base: str = MEN, query: str = "") -> tuple[int, Any]:
    response = await platform.client.post(f"{base}/stream-links{query}", json=body, headers=bearer(who))
    return response.status, await (response.text() if "csv" in query and response.status == 201 else response.json())


async def test_a_sections_links_are_issued_at_once_audited_and_reissued_one_by_one(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    status, before = await roster(platform, "Li")
    assert status == 200, before
    assert before["section"] == {"slug": "youth-m", "name": "Male Youth"}
    assert before["time_zone"] == "Asia/Shanghai"
    assert [(p["start_no"], p["name"], p["board"], p["state"]) for p in before["players"]] == [
        (1, "Male Youth Player 1", 1, "no-link"), (2, "Male Youth Player 2", 2, "no-link"),
        (3, "Male Youth Player 3", 1, "no-link"), (4, "Male Youth Player 4", 2, "no-link"),
    ]  # fmt: skip
    assert before["counts"]["no-link"] == 4

    status, issued = await issue(platform, "Wang", {"which": "all"})
    assert status == 201, issued
    assert [row["name"] for row in issued["issued"]] == [f"Male Youth Player {n}" for n in (1, 2, 3, 4)]
    links = {row["player"]: row["path"] for row in issued["issued"]}
    assert all(row["link"].endswith(row["path"]) and row["link"].startswith("http") for row in issued["issued"])
    assert all(row["qr"].startswith("data:image/svg+xml") for row in issued["issued"])  # for the printed sheet
    for path in links.values():
        assert (await platform.client.get(path)).status == 200  # each one opens its player's page
    audited = count(settings, AuditEntry, col(AuditEntry.action) == "stream-link.issued")
    assert audited == 4
    status, after = await roster(platform, "Li")
    assert {p["state"] for p in after["players"]} == {"not-connected"}
    assert all(p["link"]["status"] == "working" for p in after["players"])

    status, again = await issue(platform, "Li", {"which": "missing"})
    assert (status, again["issued"], len(again["skipped"])) == (201, [], 4)  # every link still works

    response = await platform.client.post("/api/v1/players/youth-m-p3/stream-token", headers=bearer("Wang"))
    assert response.status == 201
    fresh = await response.json()
    assert fresh["link"].endswith(fresh["url"])
    old = await platform.client.get(links["youth-m-p3"])
    assert old.status == 404  # the documented refusal of a replaced link
    assert "replaced" in await old.text()
    assert (await platform.client.get(fresh["url"])).status == 200
    assert count(settings, AuditEntry, col(AuditEntry.action) == "stream-link.issued") == 5
    status, last = await roster(platform, "Li")
    p3 = next(p for p in last["players"] if p["player"] == "youth-m-p3")
    assert p3["link"]["count"] == 2 and p3["state"] == "not-connected"

    approval = await platform.client.post("/api/v1/players/youth-m-p1/camera/approval",
                                          json={"approved": True, "note": ""}, headers=bearer("Li"))  # fmt: skip
    assert approval.status == 201
    status, approved = await roster(platform, "Li")
    p1 = approved["players"][0]
    assert p1["setup"]["approval"]["approved"] is True and p1["setup"]["approval"]["by"] == "Li"

    status, text = await issue(platform, "Li", {"which": "all"}, query="?format=csv")
    assert status == 201, text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["name"] for row in rows] == [f"Male Youth Player {n}" for n in (1, 2, 3, 4)]
    assert [row["board"] for row in rows] == ["1", "2", "1", "2"]
    for row in rows:
        path = row["link"].removeprefix(str(platform.client.make_url("")).rstrip("/"))
        assert (await platform.client.get(path)).status == 200
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        assert verify_audit(connection).ok


async def test_the_roster_follows_the_role_and_the_assignment(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    entries = count(settings, AuditEntry)
    assert (await roster(platform, "Reader"))[0] == 200  # the review panel reads
    status, refused = await issue(platform, "Reader", {})
    assert status == 403, refused
    status, refused = await roster(platform, "Wang", WOMEN)
    assert (status, refused["article"]) == (403, "16"), refused
    status, refused = await issue(platform, "Wang", {}, WOMEN)
    assert (status, refused["article"]) == (403, "16"), refused
    status, board_two = await roster(platform, "Zhao")
    assert status == 200 and board_two["boards"] == [2]
    assert [p["start_no"] for p in board_two["players"]] == [2, 4]  # their board's players only
    status, refused = await issue(platform, "Zhao", {})
    assert status == 403, refused  # a board's arbiter does not replace a whole section's links
    assert (await roster(platform, "Li", WOMEN))[0] == 200
    assert count(settings, StreamToken) == 0 and count(settings, AuditEntry) == entries


async def test_bad_input_is_a_4xx_and_changes_nothing(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    entries = count(settings, AuditEntry)
    for body, query in (({"which": "some"}, ""), ({"which": 3}, ""), ({}, "?format=pdf")):
        status, answer = await issue(platform, "Li", body, query=query)
        assert status == 400, (body, query, answer)
    response = await platform.client.post(f"{MEN}/stream-links", data=b"[1", headers=bearer("Li"))
    assert response.status == 400
    response = await platform.client.post(f"{MEN}/stream-links", json=[1], headers=bearer("Li"))
    assert response.status == 400
    for base in (f"/api/v1/events/{EVENT}/sections/nope", "/api/v1/events/nope/sections/youth-m"):
        assert (await roster(platform, "Li", base))[0] == 404
        assert (await issue(platform, "Li", {}, base))[0] == 404
    assert (await platform.client.get(f"{MEN}/camera-roster")).status == 401
    assert count(settings, StreamToken) == 0 and count(settings, AuditEntry) == entries
