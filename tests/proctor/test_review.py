"""The review panel's API: a game's timeline, a player's history, incident filters, the incident report (HTML and
PDF), the exports (RIF, PSQ, standings CSV and TRF) and the audit check, on the real app with signed webhooks."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pypdf
import pytest
from sqlalchemy import update

from engine.penalties import Role
from engine.records import read_psq, read_rif
from engine.trf import read_trf
from proctor.accounts import Identity
from proctor.database import create_database_engine, migrate
from proctor.events import load_event_file
from proctor.models import AuditEntry
from proctor.review import evidence_files
from proctor.settings import Settings
from proctor.time_zones import local_time
from tests.proctor.conftest import Platformer, app_context, iso
from tests.proctor.test_arbiters import act, add_arbiter, bearer
from video.checks import Check, Finding

pytestmark = pytest.mark.asyncio

SNAPSHOT = b"\xff\xd8 a camera snapshot"
CLIP_SHA = hashlib.sha256(b"the ear-check clip").hexdigest()
EVENT = """
[event]
slug = "review-cup"
name = "评审杯 Review Cup"
time_zone = "Asia/Shanghai"

[[sections]]
slug = "open"
name = "Open"
rule = "renju"
opening = "free"
time_control = "rapid-15"
system = "swiss"
rounds = 2
tiebreaks = "PTS,BH,WIN"

[[sections.players]]
start_no = 1
name = "王小明"
team = "杭州"
gender = "m"
rating = 2100
platform_ref = "rc-1"

[[sections.players]]
start_no = 2
name = "Player Two"
platform_ref = "rc-2"

[[sections.players]]
start_no = 3
name = "Player Three"
platform_ref = "rc-3"

[[sections.players]]
start_no = 4
name = "Player Four"
platform_ref = "rc-4"

[[sections.pairings]]
round = 1
board = 1
black = 1
white = 3
platform_game_id = "rc-r1-b1"

[[sections.pairings]]
round = 1
board = 2
black = 4
white = 2
platform_game_id = "rc-r1-b2"

[[sections.pairings]]
round = 2
board = 1
black = 2
white = 1
result = "½-½"

[[sections.pairings]]
round = 2
board = 2
black = 3
white = 4
result = "1-0"
"""


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The service's test settings, with the camera's media in the test's own folder."""
    # A long grace: the game is back-dated, and the no-show deadline must not be ruled before the joins arrive.
    return Settings(database_url=database_url, deadline_grace_ms=600_000, feed_gap_timeout_s=0.5,
                    media_dir=str(tmp_path / "media"))  # fmt: skip


def load_event(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "review-cup.toml"
    path.write_text(EVENT, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def get(platform: Platformer, path: str, token: str | None) -> Any:
    return await platform.client.get(path, headers=bearer(token) if token else {})


async def camera_finding(platform: Platformer, player: str, finding: Finding, snapshot: bytes | None) -> None:
    camera = app_context(platform).camera
    camera.on_finding(player, finding, snapshot)
    await asyncio.gather(*list(camera.pending))


async def reviewed_game(platform: Platformer, settings: Settings) -> dict[str, Any]:
    """A game that started a minute ago: three moves, White's feed lost for 2 s, White's camera lost for 7 s, the
    arbiter pauses, resumes and gives time, two penalties (one from an incident with evidence), then Black resigns."""
    arbiter = add_arbiter(settings, "张裁判", "arbiter")
    start = int(time.time() * 1000) - 60_000
    data = {"black": {"id": "rv-b", "name": "王小明"}, "white": {"id": "rv-w", "name": "Li <Na>"}, "rule": "renju",
            "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    _, created = await platform.send("game.created", "rv", data, at=start - 60_000)
    game = int(created["game"])
    for side in "bw":
        await platform.send("player.joined", "rv", {"player": f"rv-{side}"}, at=start - 30_000)
    await platform.send("move", "rv", {"point": "h8"}, at=start + 5_000)
    await platform.send("player.disconnected", "rv", {"player": "rv-w"}, at=start + 10_000)
    await platform.send("player.reconnected", "rv", {"player": "rv-w"}, at=start + 12_000)
    await platform.send("move", "rv", {"point": "i9"}, at=start + 14_000)
    await platform.send("move", "rv", {"point": "h9"}, at=start + 20_000)
    lost = (start + 16_000) / 1000
    await camera_finding(platform, "rv-w", Finding(Check.LOST, lost, None, "no frames for 5 s"), SNAPSHOT)
    await camera_finding(platform, "rv-w", Finding(Check.LOST, lost, lost + 7, "frames again"), None)
    path = f"/api/v1/games/{game}/actions"
    for body in (
        {"action": "pause", "reason": "the player called the arbiter"},
        {"action": "resume", "reason": "settled"},
        {"action": "adjust", "player": "rv-w", "delta_ms": 30_000, "reason": "time lost to the call"},
        {"action": "penalty", "player": "rv-b", "offence": "17.4", "reason": "pressed the clock first"},
    ):
        status, _ = await act(platform, arbiter, path, body)
        assert status == 200, body
    status, raised = await act(platform, arbiter, "/api/v1/incidents", {
        "game": game, "kind": "earphones", "article": "36.2", "player": "rv-b",
        "summary": 'earbud <b>visible</b> & "loud"',
    })  # fmt: skip
    assert status == 201
    incident = raised["id"]
    context = app_context(platform)
    await context.writer.submit(
        lambda connection, batch: context.service.add_evidence(
            connection, batch, incident, Identity("张裁判", Role.ARBITER), "open/ear-check.webm", CLIP_SHA,
            "clip of the ear check", int(time.time() * 1000),
        )
    )  # fmt: skip
    status, _ = await act(platform, arbiter, f"/api/v1/incidents/{incident}/actions",
                          {"action": "penalty", "offence": "36.2", "note": "confirmed on camera"})  # fmt: skip
    assert status == 201
    await platform.send("resign", "rv", {"player": "rv-b"}, at=start + 25_000)
    return {"game": game, "start": start, "incident": incident, "arbiter": arbiter}


async def test_the_timeline_of_a_game(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    game, start = played["game"], played["start"]
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    response = await get(platform, f"/api/v1/games/{game}/timeline", reviewer)
    assert response.status == 200
    timeline = await response.json()
    moves = timeline["moves"]
    assert [(m["token"], m["colour"], m["player"]) for m in moves] == [
        ("h8", "black", "rv-b"), ("i9", "white", "rv-w"), ("h9", "black", "rv-b"), ("resign:black", None, "rv-b")
    ]  # fmt: skip
    # 14.2: Black's clock runs from the scheduled start; the disconnection does not stop White's (34.3).
    assert [m["clocks"] for m in moves[:3]] == [
        {"rv-b": 895_000, "rv-w": 900_000}, {"rv-b": 895_000, "rv-w": 891_000}, {"rv-b": 889_000, "rv-w": 891_000}
    ]  # fmt: skip
    assert [m["think_ms"] for m in moves[:3]] == [5_000, 9_000, 6_000]
    events = timeline["events"]
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    assert {"move", "clock", "penalty", "verdict", "game", "incident", "incident-action"} <= {e["type"] for e in events}
    paused = next(e for e in events if e.get("kind") == "clock-paused")
    assert (paused["by"], paused["why"], paused["article"]) == (
        "张裁判 (arbiter)",
        "the player called the arbiter",
        "14.6",
    )
    adjusted = next(e for e in events if e.get("kind") == "time-adjusted")
    assert adjusted["type"] == "clock" and adjusted["article"] == "14.5, 14.8"
    penalties = [e for e in events if e["type"] == "penalty"]
    assert [(p["article"], p["why"]) for p in penalties] == [
        ("17.4, 15.1", "pressed the clock first"), ("36.2, 15.1", "confirmed on camera")
    ]  # fmt: skip
    assert penalties[1]["evidence"] == [f"incident:{played['incident']}"]
    verdict = next(e for e in events if e["type"] == "incident-action" and e["action"] == "penalty")
    assert (verdict["by"], verdict["article"], verdict["verdict"]["penalty"]) == ("张裁判 (arbiter)", "36.2, 15.1",
                                                                                    "warning")  # fmt: skip
    moves_at = [e["at"] for e in events if e["type"] == "move"]
    assert moves_at[:3] == [start + 5_000, start + 14_000, start + 20_000]
    # The feed and the camera are separate series, per player.
    assert timeline["liveness"]["feed"] == {
        "rv-b": [], "rv-w": [{"start": start + 10_000, "end": start + 12_000, "duration_ms": 2_000}]
    }  # fmt: skip
    camera = timeline["liveness"]["camera"]
    assert camera["rv-b"] == []
    (gap,) = camera["rv-w"]
    assert (gap["kind"], gap["article"], gap["start"], gap["end"]) == ("camera-lost", "36.4", start + 16_000,
                                                                        start + 23_000)  # fmt: skip
    result = timeline["result"]
    assert (result["winner_player"], result["reason"], result["results"]) == ("rv-w", "resignation",
                                                                              {"rv-b": "0", "rv-w": "1"})  # fmt: skip
    assert timeline["players"]["rv-b"] == {"name": "王小明", "seat": "first", "colour": "black"}
    assert (await get(platform, "/api/v1/games/999/timeline", reviewer)).status == 404


async def test_the_records_parse_back_to_the_same_moves(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    token = played["arbiter"]
    response = await get(platform, f"/api/v1/games/{played['game']}/record.rif", token)
    assert response.status == 200 and response.content_type == "application/xml"
    (rif,) = read_rif(await response.text())
    assert rif.tokens == ["h8", "i9", "h9", "resign:black"]
    assert (rif.black, rif.white, rif.result, rif.info["termination"]) == ("王小明", "Li <Na>", "white", "resignation")
    response = await get(platform, f"/api/v1/games/{played['game']}/record.psq", token)
    assert response.status == 200
    text = await response.text()
    psq = read_psq(text)
    assert psq.stones() == rif.stones() and (psq.black, psq.white) == ("王小明", "Li <Na>")
    assert [line.split(",")[2] for line in text.splitlines()[1:4]] == ["5000", "9000", "6000"]


async def test_a_player_history(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    response = await get(platform, "/api/v1/players/rv-b/history", played["arbiter"])
    assert response.status == 200
    history = await response.json()
    assert history["name"] == "王小明"
    (game,) = history["games"]
    assert (game["game"], game["colour"], game["opponent"]["player"], game["result"]) == (played["game"], "black",
                                                                                         "rv-w", "0")  # fmt: skip
    assert [(p["offence"], p["penalty"], p["articles"]) for p in history["penalties"]] == [
        ("17.4", "warning", "17.4, 15.1"), ("36.2", "warning", "36.2, 15.1")
    ]  # fmt: skip
    assert [i["kind"] for i in history["incidents"]] == ["earphones"]
    white = await (await get(platform, "/api/v1/players/rv-w/history", played["arbiter"])).json()
    assert [i["kind"] for i in white["incidents"]] == ["camera-lost"] and white["penalties"] == []
    assert (await get(platform, "/api/v1/players/nobody/history", played["arbiter"])).status == 404


async def test_incident_filters(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    token = played["arbiter"]

    async def kinds(query: str) -> list[str]:
        response = await get(platform, f"/api/v1/incidents?{query}", token)
        assert response.status == 200, await response.text()
        return [i["kind"] for i in await response.json()]

    game = played["game"]
    assert await kinds(f"game={game}") == ["earphones", "camera-lost"]  # newest first
    assert await kinds("player=rv-w") == ["camera-lost"]
    assert await kinds("status=penalty") == ["earphones"]
    assert await kinds("status=note") == ["camera-lost"]  # the detector's "ended after 7 s"
    assert await kinds("status=open") == []
    assert await kinds("source=detector") == ["camera-lost"]
    assert await kinds("source=arbiter") == ["earphones"] == await kinds("source=arbiter:张裁判")
    assert await kinds("article=36.4") == ["camera-lost"]
    assert await kinds("article=36") == ["earphones", "camera-lost"]  # an article and its sub-articles
    assert await kinds("article=36.2") == ["earphones"]
    assert await kinds("article=3") == []
    assert await kinds("q=EARBUD") == ["earphones"] == await kinds("q=ear")
    assert await kinds("q=100%25") == []
    start = played["start"]
    assert await kinds(f"since={start + 16_000}&until={start + 16_000}") == ["camera-lost"]
    assert await kinds(f"until={start}") == []
    for bad in ("status=closed", "since=yesterday", "game=x"):
        assert (await get(platform, f"/api/v1/incidents?{bad}", token)).status == 400
    assert (await get(platform, "/api/v1/incidents?event=nowhere", token)).status == 404


async def test_the_incident_report_escapes_text_and_lists_the_evidence(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load_event(settings, tmp_path)
    played = await reviewed_game(platform, settings)
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    response = await get(platform, f"/api/v1/reports/incidents.html?game={played['game']}", reviewer)
    assert response.status == 200 and response.content_type == "text/html"
    page = await response.text()
    assert "<h1>评审杯 Review Cup</h1>" in page
    assert "earbud &lt;b&gt;visible&lt;/b&gt; &amp; &quot;loud&quot;" in page and "<b>visible</b>" not in page
    assert "Li &lt;Na&gt; (rv-w)" in page and "王小明 (rv-b)" in page
    assert hashlib.sha256(SNAPSHOT).hexdigest() in page
    assert "open/ear-check.webm" in page and CLIP_SHA in page
    assert "warning for rv-b (36.2, 15.1)" in page and "ended after 7 s" in page
    # Every time in the event's zone, named once (24-hour), not UTC.
    assert "Times: Asia/Shanghai (UTC+08:00), 24-hour." in page and " UTC<" not in page
    listed = await (await get(platform, f"/api/v1/incidents?game={played['game']}", reviewer)).json()
    assert listed and all(f"<th>Raised</th><td>{local_time(i['at'], 'Asia/Shanghai')}</td>" in page for i in listed)
    only_camera = await (await get(platform, "/api/v1/reports/incidents.html?kind=camera-lost", reviewer)).text()
    assert "Incident" in only_camera and "earphones" not in only_camera


async def test_the_incident_report_as_pdf(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    load_event(settings, tmp_path)
    played = await reviewed_game(platform, settings)
    response = await get(platform, "/api/v1/reports/incidents.pdf", played["arbiter"])
    assert response.status == 200 and response.content_type == "application/pdf"
    data = await response.read()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    reader = pypdf.PdfReader(io.BytesIO(data))
    text = "".join(page.extract_text() for page in reader.pages)
    assert "评审杯 Review Cup" in text and "王小明" in text
    assert "earbud <b>visible</b>" in text and "camera-lost" in text
    assert "Times: Asia/Shanghai (UTC+08:00), 24-hour." in text
    assert hashlib.sha256(SNAPSHOT).hexdigest() in text.replace("\n", "")
    context = app_context(platform)
    context.settings = replace(context.settings, pdf_font=str(tmp_path / "missing.ttc"))
    refused = await get(platform, "/api/v1/reports/incidents.pdf", played["arbiter"])
    body = await refused.json()
    assert refused.status == 500 and body["error"] == "configuration" and "fonts-wqy-microhei" in body["message"]


async def test_standings_of_a_section(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    load_event(settings, tmp_path)
    token = add_arbiter(settings, "Panel", "reviewer")
    path = "/api/v1/events/review-cup/sections/open/standings"
    start = int(time.time() * 1000) - 60_000
    games = {"rc-r1-b1": ("rc-1", "rc-3", "rc-3"), "rc-r1-b2": ("rc-4", "rc-2", "rc-4")}
    for name, (black, white, _) in games.items():
        data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "time_control": "rapid-15",
                "start_at": iso(start)}  # fmt: skip
        status, body = await platform.send("game.created", name, data, at=start - 60_000)
        assert status == 200 and "incidents" not in body
    refused = await get(platform, f"{path}.csv?round=1", token)
    assert refused.status == 409 and "round 1 board 1, round 1 board 2" in (await refused.json())["message"]
    for name, (black, white, loser) in games.items():
        for player in (black, white):
            await platform.send("player.joined", name, {"player": player}, at=start - 30_000)
        await platform.send("move", name, {"point": "h8"}, at=start + 5_000)
        await platform.send("resign", name, {"player": loser}, at=start + 9_000)
    response = await get(platform, f"{path}.csv", token)
    assert response.status == 200 and response.content_type == "text/csv"
    rows = list(csv.reader(io.StringIO(await response.text())))
    assert rows[0] == ["rank", "start_no", "name", "team", "rating", "points", "BH", "WIN", "round 1", "round 2"]
    assert [row[:6] + row[8:] for row in rows[1:]] == [
        ["1", "1", "王小明", "杭州", "2100", "1.5", "3w1", "2b½"],
        ["2", "2", "Player Two", "", "", "1.5", "4b1", "1w½"],  # Buchholz 1.5 against 2.5
        ["3", "3", "Player Three", "", "", "1", "1b0", "4w1"],
        ["4", "4", "Player Four", "", "", "0", "2w0", "3b0"],
    ]  # fmt: skip
    response = await get(platform, f"{path}.trf", token)
    assert response.status == 200
    trf = read_trf(await response.text())
    assert trf.tournament.entrant(1).name == "王小明"
    assert {e.start_no: e.declared_points for e in trf.tournament.entrants} == {
        1: Fraction(3, 2), 2: Fraction(3, 2), 3: Fraction(1), 4: Fraction(0)
    }  # fmt: skip
    after_one = list(csv.reader(io.StringIO(await (await get(platform, f"{path}.csv?round=1", token)).text())))
    assert [row[5] for row in after_one[1:]] == ["1", "1", "0", "0"]
    assert (await get(platform, "/api/v1/events/review-cup/sections/nope/standings.csv", token)).status == 404
    history = await (await get(platform, "/api/v1/players/rc-1/history?event=review-cup", token)).json()
    assert history["name"] == "王小明" and history["sections"][0]["start_no"] == 1
    assert [(g["event"]["round"], g["result"]) for g in history["games"]] == [(1, "1")]


async def test_the_audit_check(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    response = await get(platform, "/api/v1/audit/verify", played["arbiter"])
    report = await response.json()
    assert response.status == 200 and report["ok"] is True and report["problems"] == [] and report["entries"] > 10
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(update(AuditEntry).where(AuditEntry.id == 3).values(actor="someone else"))  # type: ignore[arg-type]
    engine.dispose()
    report = await (await get(platform, "/api/v1/audit/verify", played["arbiter"])).json()
    assert report["ok"] is False and report["problems"] == ["entry 3: its content was changed after it was written"]


ROUTES_READ = (
    "/api/v1/games/1/timeline", "/api/v1/players/p/history", "/api/v1/incidents?player=p",
    "/api/v1/games/1/record.rif", "/api/v1/games/1/record.psq", "/api/v1/events/e/sections/s/standings.csv",
    "/api/v1/events/e/sections/s/standings.trf", "/api/v1/audit/verify", "/api/v1/reports/incidents.html",
    "/api/v1/reports/incidents.pdf", "/api/v1/appeals", "/api/v1/appeals/1",
)  # fmt: skip


async def test_everything_needs_an_arbiter(platform: Platformer) -> None:
    for path in ROUTES_READ:
        response = await platform.client.get(path)
        assert response.status == 401, path
        response = await platform.client.get(path, headers=bearer("forged"))
        assert response.status == 401, path
    for path in ("/api/v1/appeals", "/api/v1/appeals/1/votes", "/api/v1/appeals/1/decision"):
        assert (await platform.client.post(path, json={})).status == 401, path


async def test_the_psq_of_a_swap2_game_keeps_its_opening(platform: Platformer, settings: Settings) -> None:
    """Swap2 option c (11.2.2 B c): the stones as played, then the decisions; the PSQ and the RIF agree."""
    arbiter = add_arbiter(settings, "张裁判", "arbiter")
    start = int(time.time() * 1000) - 60_000
    data = {"black": {"id": "s2-a", "name": "王小明"}, "white": {"id": "s2-b", "name": "Li Na"}, "rule": "swap2",
            "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    _, created = await platform.send("game.created", "s2", data, at=start - 60_000)
    for player in ("s2-a", "s2-b"):
        await platform.send("player.joined", "s2", {"player": player}, at=start - 30_000)
    at = start
    for kind, body in (("move", {"point": "h8"}), ("move", {"point": "a1"}), ("move", {"point": "i9"}),
                       ("opening.add2", {}), ("move", {"point": "j10"}), ("move", {"point": "k11"}),
                       ("opening.swap", {}), ("move", {"point": "l12"})):  # fmt: skip
        at += 2_000
        status, answer = await platform.send(kind, "s2", body, at=at)
        assert status == 200 and "incidents" not in answer, (kind, answer)
    game = created["game"]
    response = await get(platform, f"/api/v1/games/{game}/record.psq", arbiter)
    assert response.status == 200, await response.text()
    text = await response.text()
    assert "opening: swap2" in text and "actions: h8 a1 i9 add2 j10 k11 swap l12" in text
    (rif,) = read_rif(await (await get(platform, f"/api/v1/games/{game}/record.rif", arbiter)).text())
    psq = read_psq(text)
    assert psq.actions == rif.actions and (psq.black, psq.white) == (rif.black, rif.white) == ("Li Na", "王小明")


def test_the_report_pairs_each_file_of_an_incident_with_its_own_hash() -> None:
    """A scheduled ear check's incident holds four stills and crops and a clip, each with its SHA-256 (36.2)."""
    one = {"evidence": {"media": ["a.jpg"], "sha256": "h-a"}, "actions": []}
    added = {"action": "evidence", "verdict": {"evidence": {"media": ["x.webm"], "sha256": "hx"}}}
    files = {"media": ["l.jpg", "l-ear.jpg", "c.webm"], "sha256": ["h1", "h2", "h3"]}
    several = {"evidence": files, "actions": [added]}
    assert evidence_files(one) == [("a.jpg", "h-a")]
    assert evidence_files(several) == [("l.jpg", "h1"), ("l-ear.jpg", "h2"), ("c.webm", "h3"), ("x.webm", "hx")]
    # A list of files under one hash cannot say which is which: no hash rather than a wrong one.
    assert evidence_files({"evidence": {"media": ["a", "b"], "sha256": "h"}, "actions": []}) == [("a", ""), ("b", "")]
