"""Issue 12, item 4: ``proctor audit verify`` finds every edit of what the audit log protects, each reported with
the table and the row it concerns: the audit entries hold the hash of every append-only row, the game rows are
replayed from their events, and the accounts have a chained log of their own."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, select, text
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.cli import main as cli
from proctor.database import create_database_engine
from proctor.models import CameraAction, FeedDelivery, GameEvent, IncidentAction
from proctor.settings import Settings
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform


def add_arbiter(settings: Settings, capsys: pytest.CaptureFixture[str], name: str, role: str) -> dict[str, str]:
    assert cli(["arbiter", "add", name, "--role", role, "--db", settings.database_url]) == 0
    return {"Authorization": f"Bearer {capsys.readouterr().out.strip()}"}


@pytest.fixture
async def played(platform: Platformer, settings: Settings, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    """A game with moves, an incident with a dismissal and a note, and a camera message: the ids of their rows."""
    chief = add_arbiter(settings, capsys, "Li", "chief")
    arbiter = add_arbiter(settings, capsys, "Wang", "arbiter")
    start = int(time.time() * 1000) - 10_000
    _, created = await platform.create("au", start=start)
    for side in ("b", "w"):
        await platform.send("player.joined", "au", {"player": f"au-{side}"}, at=start - 30_000)
    for point, at in (("h8", start + 1_000), ("h9", start + 2_000)):
        assert (await platform.send("move", "au", {"point": point}, at=at))[0] == 200
    client = platform.client
    response = await client.post("/api/v1/incidents", headers=chief,
                                 json={"game": created["game"], "kind": "noise", "summary": "talking"})  # fmt: skip
    incident = (await response.json())["id"]
    for action in ("dismiss", "note"):
        response = await client.post(f"/api/v1/incidents/{incident}/actions", headers=arbiter,
                                     json={"action": action, "note": "seen"})  # fmt: skip
        assert response.status == 201
    assert (await client.post("/api/v1/players/au-b/stream-token", headers=chief)).status == 201
    response = await client.post("/api/v1/players/au-b/camera/messages", headers=arbiter, json={"text": "hello"})
    assert response.status == 201
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        assert verify_audit(connection).problems == ()
        actions = connection.execute(select(col(IncidentAction.id)).order_by(col(IncidentAction.id))).scalars().all()
        move = connection.execute(select(col(FeedDelivery.id)).where(col(FeedDelivery.kind) == "move")).scalars()
        event = connection.execute(select(col(GameEvent.id)).order_by(col(GameEvent.id).desc())).scalars()
        ids = {"dismissal": actions[0], "note": actions[1], "incident": incident, "move": next(iter(move)),
               "event": next(iter(event)), "message": connection.execute(select(col(CameraAction.id))).scalar_one(),
               "game": created["game"]}  # fmt: skip
    engine.dispose()
    return ids


EDITS = {
    "an action changed from dismiss to confirm by another arbiter": (
        "UPDATE incident_action SET action = 'confirm', arbiter = 'Li' WHERE id = {dismissal}",
        "incident_action {dismissal}: changed after it was written",
    ),
    "an action deleted": ("DELETE FROM incident_action WHERE id = {note}", "incident_action {note}: deleted"),
    "an incident summary edited": (
        "UPDATE incident SET summary = 'nothing happened' WHERE id = {incident}",
        "incident {incident}: changed after it was written",
    ),
    "a move's stored body changed": (
        "UPDATE feed_delivery SET body = CAST(REPLACE(CAST(body AS TEXT), 'h8', 'a1') AS JSON) WHERE id = {move}",
        "feed_delivery {move}: changed after it was written",
    ),
    "a game_event row edited": (
        "UPDATE game_event SET at_ms = at_ms + 60000 WHERE id = {event}",
        "game_event {event}: changed after it was written",
    ),
    "a camera message edited": (
        "UPDATE camera_action SET detail = CAST(REPLACE(CAST(detail AS TEXT), 'hello', 'resign') AS JSON) "
        "WHERE id = {message}",
        "camera_action {message}: changed after it was written",
    ),
    "an arbiter's role raised to chief": (
        "UPDATE arbiter SET role = 'chief' WHERE name = 'Wang'",
        "arbiter Wang (id 2): its role is chief, but its account changes make it arbiter",
    ),
    "a game's result written over": (
        "UPDATE game SET winner = 'white', reason = 'resignation' WHERE id = {game}",
        "game {game}: its winner is 'white' but the replay of its events gives",
    ),
    "an arbiter added in the database": (
        "INSERT INTO arbiter (name, role, token_hash, password_hash) VALUES ('Mallory', 'chief', 'x', '')",
        "arbiter Mallory (id 3): not in the account changes",
    ),
}


@pytest.fixture
def connection(settings: Settings) -> Iterator[Connection]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        yield connection
    engine.dispose()


@pytest.mark.parametrize("edit", list(EDITS))
async def test_verify_reports_each_edit_with_its_row(played: dict[str, int], connection: Connection, edit: str) -> None:
    statement, expected = (part.format(**played) for part in EDITS[edit])
    transaction = connection.begin()
    connection.execute(text(statement))
    problems = verify_audit(connection).problems
    transaction.rollback()
    assert any(problem.startswith(expected) for problem in problems), problems
    assert verify_audit(connection).ok


async def test_the_command_says_which_row_in_words(
    played: dict[str, int], settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["audit", "verify", "--db", settings.database_url]) == 0
    assert "audit log intact" in capsys.readouterr().out
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE incident SET summary = 'edited' WHERE id = {played['incident']}"))
    engine.dispose()
    assert cli(["audit", "verify", "--db", settings.database_url]) == 1
    out = capsys.readouterr().out
    assert f"incident {played['incident']}: changed after it was written" in out and "NOT intact" in out
