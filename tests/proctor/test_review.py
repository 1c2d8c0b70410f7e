"""The review panel's API: a game's timeline, a player's history, incident filters, the incident report (HTML and
PDF), the exports (RIF, PSQ, standings CSV and TRF) and the audit check, on the real app with signed webhooks."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import re
import time
from dataclasses import replace
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cv2
import numpy as np
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


def jpeg_still() -> bytes:
    """A real JPEG (a grey frame with a bright square), as the camera saves its snapshots."""
    frame = np.full((120, 160, 3), 90, dtype=np.uint8)
    frame[30:90, 50:110] = 220
    ok, data = cv2.imencode(".jpg", frame)
    assert ok
    return bytes(data.tobytes())


class Tables(HTMLParser):
    """Every table of a page as rows of cell texts, with the heading (h1–h4) it follows; and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.heading = ""
        self.texts: list[str] = []
        self._in: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "style":
            self._in = tag
        elif tag in ("h1", "h2", "h3", "h4"):
            self._in, self.heading = tag, ""
        elif tag == "table":
            self.tables.append((self.heading, []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "style":
            return
        self.texts.append(data)
        if self._in:
            self.heading += data
        if self._cell is not None:
            self._cell.append(data)

    @classmethod
    def of(cls, page: str) -> Tables:
        parser = cls()
        parser.feed(page)
        return parser

    def after(self, heading: str) -> list[list[str]]:
        return next(rows for h, rows in self.tables if h == heading)

    def text(self) -> str:
        return " ".join(self.texts)


CHIEF = "陈裁判长"


async def reported_game(platform: Platformer, settings: Settings, tmp_path: Path) -> dict[str, Any]:
    """The reviewed game in the review cup (whose chief arbiter is 陈裁判长), with White's camera lost a second time,
    with a real still: one case of two occurrences."""
    path = tmp_path / "review-cup.toml"
    path.write_text(EVENT + f'\n[[arbiters]]\nname = "{CHIEF}"\nrole = "chief"\n', encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    played = await reviewed_game(platform, settings)
    again = (played["start"] + 40_000) / 1000
    await camera_finding(platform, "rv-w", Finding(Check.LOST, again, None, "no frames for 5 s"), jpeg_still())
    return played


def user_data_removed(text: str, *also: str) -> str:
    """The page's text without the user data it shows as written (names, the event's name, the arbiters' notes and
    summary, platform and file names, ids, hashes)."""
    user_data = ("评审杯 Review Cup", "王小明", "Li <Na>", "张裁判", CHIEF, 'earbud <b>visible</b> & "loud"',
                 "pressed the clock first", "confirmed on camera", "clip of the ear check", "tourney")  # fmt: skip
    for value in (*user_data, *also):
        text = text.replace(value, " ")
    text = re.sub(r"[0-9a-f]{64}", " ", text)  # hashes
    text = re.sub(r"\S+\.(?:jpg|webm)", " ", text)  # file names
    return re.sub(r"\brv(-[bw])?\b", " ", text)  # the platform's game and player ids


async def test_the_incident_report_reads_like_a_report(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    played = await reported_game(platform, settings, tmp_path)
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    game, incident = played["game"], played["incident"]
    response = await get(platform, "/api/v1/reports/incidents.html", reviewer)
    assert response.status == 200 and response.content_type == "text/html"
    assert "img-src data:" in response.headers["Content-Security-Policy"]
    page = await response.text()
    assert page.startswith('<!DOCTYPE html>\n<html lang="zh-CN">')  # Chinese by default
    # Every text escaped.
    assert "earbud &lt;b&gt;visible&lt;/b&gt; &amp; &quot;loud&quot;" in page and "<b>visible</b>" not in page
    tables = Tables.of(page)
    # The event's zone named at the top and in the print footer of every page.
    zone = "时间：Asia/Shanghai (UTC+08:00)，24 小时制"
    assert f'<p class="zone">{zone}</p>' in page and f"评审杯 Review Cup：事件报告 · {zone}</footer>" in page
    # The summary first: one row per player and kind.
    assert page.index("汇总（按棋手与类别）") < page.index("<h2>案件</h2>")
    header, *rows = tables.after("汇总（按棋手与类别）")
    assert header == ["棋手 / 对局", "类别", "案件", "次数", "总时长", "首次", "末次", "结果"]
    listed = await (await get(platform, "/api/v1/incidents", reviewer)).json()
    lost = sorted(i["at"] for i in listed if i["kind"] == "camera-lost")
    ear = next(i["at"] for i in listed if i["kind"] == "earphones")

    def at(ms: int) -> str:
        return local_time(ms, "Asia/Shanghai")

    assert rows == [
        ["Li <Na>", "摄像头断开", "1", "2", "7 秒", at(lost[0]), at(lost[1]), "待处理"],
        ["王小明", "耳机", "1", "1", "—", at(ear), at(ear), "警告（第 36.2, 15.1 条）"],
    ]  # fmt: skip
    # One section per case: its facts, occurrences, evidence with hashes (checked against the files), actions, verdict.
    cases = await (await get(platform, "/api/v1/cases?player=rv-w", reviewer)).json()
    (camera_case,) = cases["cases"]
    heading = f"案件 #{camera_case['id']}：摄像头断开 · Li <Na>"
    assert heading in [h for h, _ in tables.tables]
    facts = {row[0]: row[1] for row in tables.after(heading)}
    assert (facts["棋手"], facts["平台编号"], facts["条款"], facts["发生次数"], facts["总时长"]) == (
        "Li <Na>", "rv-w", "第 36.4 条", "2", "7 秒")  # fmt: skip
    assert facts["对局"] == f"对局 #{game}（tourney rv）"
    assert hashlib.sha256(SNAPSHOT).hexdigest() in page and hashlib.sha256(jpeg_still()).hexdigest() in page
    assert page.count('<img src="data:image/jpeg;base64,') == 1  # the real still shown; the broken one only listed
    evidence = [row for h, rows in tables.tables if h == "证据（静态画面与文件，SHA-256）" for row in rows[1:]]
    checks = {name: check for name, _, check in evidence}
    assert sorted(checks.values()) == ["与文件一致", "与文件一致", "文件已不在（保存期满或未保存）"]
    assert next(c for name, c in checks.items() if name == "open/ear-check.webm") == "文件已不在（保存期满或未保存）"
    actions = [row for h, rows in tables.tables if h == "处理记录" for row in rows[1:]]
    assert ["检测器", "检测到结束：持续 7 秒"] in [row[1:] for row in actions]
    penalty = next(row for row in actions if row[2].startswith(f"判罚（事件 #{incident}）"))
    assert penalty[1] == "张裁判（裁判）" and "警告：王小明（第 36.2, 15.1 条）" in penalty[2]
    assert penalty[2].endswith("理由：confirmed on camera")
    assert "<strong>裁决：</strong>警告：王小明（第 36.2, 15.1 条）" in page
    assert "<strong>裁决：</strong>待处理：尚无裁判处理，第 36.4 条" in page
    # The chief arbiter's signature block: name, date and signature lines.
    assert tables.after("裁判长签字") == [["裁判长姓名", CHIEF], ["日期", ""], ["签字", ""]]
    # No English of the server's: only user data is left in Latin letters.
    left = set(re.findall(r"[A-Za-z]{2,}", user_data_removed(tables.text())))
    assert left <= {"SHA", "Asia", "Shanghai", "UTC"}, left
    only_camera = await (await get(platform, "/api/v1/reports/incidents.html?kind=camera-lost", reviewer)).text()
    assert "摄像头断开" in only_camera and "耳机" not in only_camera and "筛选条件：类别 摄像头断开" in only_camera
    # A report on the game shows the case with that game's occurrence only (the second came after the game).
    of_game = Tables.of(await (await get(platform, f"/api/v1/reports/incidents.html?game={game}", reviewer)).text())
    assert [row[:4] for row in of_game.after("汇总（按棋手与类别）")[1:]] == [["Li <Na>", "摄像头断开", "1", "1"],
                                                                         ["王小明", "耳机", "1", "1"]]  # fmt: skip
    assert (await get(platform, "/api/v1/reports/incidents.html?lang=fr", reviewer)).status == 400


async def test_the_incident_report_in_english(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    await reported_game(platform, settings, tmp_path)
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    camera_case = (await (await get(platform, "/api/v1/cases?player=rv-w", reviewer)).json())["cases"][0]
    english = await (await get(platform, "/api/v1/reports/incidents.html?lang=en", reviewer)).text()
    assert english.startswith('<!DOCTYPE html>\n<html lang="en">')
    tables = Tables.of(english)
    assert '<p class="zone">Times: Asia/Shanghai (UTC+08:00), 24-hour</p>' in english
    header, *rows = tables.after("Summary by player and kind")
    assert header[:4] == ["Player / game", "Kind", "Cases", "Occurrences"]
    assert [row[:5] + row[7:] for row in rows] == [
        ["Li <Na>", "camera lost", "1", "2", "7 s", "open"],
        ["王小明", "earphones", "1", "1", "—", "warning (art. 36.2, 15.1)"],
    ]  # fmt: skip
    assert f"Case {camera_case['id']}: camera lost · Li <Na>" in tables.text()
    assert "detected as ended: lasted 7 s" in english
    assert tables.after("Chief arbiter's signature") == [["Chief arbiter", CHIEF], ["Date", ""], ["Signature", ""]]
    assert not re.findall(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", user_data_removed(tables.text())), "Chinese"


async def test_the_incident_report_as_pdf(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    played = await reported_game(platform, settings, tmp_path)
    for lang, zone, summary, signature in (
        ("zh", "时间：Asia/Shanghai (UTC+08:00)，24 小时制", "汇总（按棋手与类别）", "裁判长签字"),
        ("en", "Times: Asia/Shanghai (UTC+08:00), 24-hour", "Summary by player and kind", "Chief arbiter's signature"),
    ):
        response = await get(platform, f"/api/v1/reports/incidents.pdf?lang={lang}", played["arbiter"])
        assert response.status == 200 and response.content_type == "application/pdf"
        data = await response.read()
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() for page in reader.pages]
        assert len(pages) > 1 and all(zone in page for page in pages), lang  # named on every page
        text = "\n".join(pages)
        assert "评审杯 Review Cup" in text and "王小明" in text and CHIEF in text
        assert text.index(summary) < text.index(signature)
        flat = text.replace("\n", "")
        assert hashlib.sha256(SNAPSHOT).hexdigest() in flat and CLIP_SHA in flat
        assert len(reader.pages[0].images) + sum(len(p.images) for p in reader.pages[1:]) == 1  # the real still
        if lang == "zh":
            assert "摄像头断开" in text and "检测到结束：持续 7 秒" in text and "警告：王小明" in text
        else:
            assert "camera lost" in text and "detected as ended: lasted 7 s" in text and "warning for 王小明" in text
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


async def test_the_report_pairs_each_file_of_an_incident_with_its_own_hash() -> None:
    """A scheduled ear check's incident holds four stills and crops and a clip, each with its SHA-256 (36.2)."""
    one = {"evidence": {"media": ["a.jpg"], "sha256": "h-a"}, "actions": []}
    added = {"action": "evidence", "verdict": {"evidence": {"media": ["x.webm"], "sha256": "hx"}}}
    files = {"media": ["l.jpg", "l-ear.jpg", "c.webm"], "sha256": ["h1", "h2", "h3"]}
    several = {"evidence": files, "actions": [added]}
    assert evidence_files(one) == [("a.jpg", "h-a")]
    assert evidence_files(several) == [("l.jpg", "h1"), ("l-ear.jpg", "h2"), ("c.webm", "h3"), ("x.webm", "hx")]
    # A list of files under one hash cannot say which is which: no hash rather than a wrong one.
    assert evidence_files({"evidence": {"media": ["a", "b"], "sha256": "h"}, "actions": []}) == [("a", ""), ("b", "")]
