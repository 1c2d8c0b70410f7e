"""The server's words in both languages (proctor.server_words): every kind of incident the service raises and every
line the engine logs has words in Chinese and English; the English has no Chinese, neither is empty; and the API
sends them beside the texts it sent before (a case, a timeline, an arbiter's answer)."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path
from typing import Any

import pytest

from proctor import server_words
from proctor.camera import Prompt
from proctor.incident_report import build_report
from proctor.server_words import (
    KINDS,
    LINE_KINDS,
    SAID,
    IncidentFacts,
    LineFacts,
    Seat,
    incident_words,
    line_words,
)
from proctor.settings import Settings
from tests.proctor.conftest import T0, Platformer, iso
from tests.proctor.test_arbiters import act, add_arbiter, bearer
from tests.proctor.test_incident_report import case, source
from tests.proctor.test_incident_report import incident as stored_incident
from tests.proctor.test_review import camera_finding, reviewed_game
from tests.proctor.test_webhooks import game_state, join_both
from video.checks import Check, Finding

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def check_bilingual(words: dict[str, str], *user_data: str) -> None:
    assert set(words) == {"zh", "en"}
    assert words["zh"].strip() and words["en"].strip()
    english = words["en"]
    for text in user_data:
        english = english.replace(text, "")
    assert not CJK.search(english), words
    assert CJK.search(words["zh"]), words


# --- Every kind has its words ---------------------------------------------------------------------------------------


def _string_calls(path: Path, names: set[str], position: int) -> set[str]:
    """The string constants passed as argument ``position`` to calls of ``names`` in one source file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in names and len(node.args) > position:
            argument = node.args[position]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.add(argument.value)
    return found


def test_every_kind_the_service_raises_has_words() -> None:
    """A new kind of incident in the code (a literal passed to ``incident`` or ``raise_incident``, a camera check, a
    prompt) fails here until it has its words."""
    raised: set[str] = set()
    for path in (ROOT / "proctor").rglob("*.py"):
        raised |= _string_calls(path, {"incident"}, 2) | _string_calls(path, {"raise_incident"}, 3)
    assert raised, "the scan found no incidents: has the call changed?"
    raised |= {check.value for check in Check} | {prompt.value for prompt in Prompt} | {"verdict-pending"}
    assert raised <= KINDS, raised - KINDS
    for kind in KINDS:
        words = incident_words(IncidentFacts(kind, "service", f"{kind}: something in English"))
        check_bilingual(words)


def test_every_line_the_engine_logs_has_words() -> None:
    source = ROOT / "engine" / "adjudication.py"
    logged = _string_calls(source, {"_log"}, 1) | _string_calls(source, {"_arbiter_log"}, 2)
    assert logged, "the scan found no log lines: has the call changed?"
    assert logged <= LINE_KINDS, logged - LINE_KINDS
    seat = Seat("white", "Li")
    for kind in LINE_KINDS:
        assert f"line.{kind}" in SAID["zh"] and f"line.{kind}" in SAID["en"], kind
        facts = LineFacts(kind, "an English line", seat, {"reason": "time-forfeit", "winner": "black"},
                          ((Seat("black", "Wang"), 60_000), (seat, 90_000)), 60_000, 90_000, 30_000,
                          {"penalty": "warning", "articles": "17.4, 15.1", "occurrence": 1,
                           "offence": "17.4"})  # fmt: skip
        check_bilingual(line_words(facts), "Li", "Wang")


def test_a_line_without_its_facts_is_still_said_in_both() -> None:
    for kind in LINE_KINDS:
        check_bilingual(line_words(LineFacts(kind, "an English line")))


def test_both_languages_have_the_same_sentences() -> None:
    assert set(SAID["zh"]) == set(SAID["en"])
    for lang in ("zh", "en"):
        for key, text in SAID[lang].items():
            assert text.strip(), (lang, key)
    for key, text in SAID["en"].items():
        assert not CJK.search(text), key


# --- What the words say -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "detail", "zh", "en"),
    [
        ("extra-person", "2 faces in view (1 at the frame's edge)", "画面中有 2 张脸（1 张在画面边缘）",
         "2 faces in view (1 at the frame's edge)"),
        ("extra-person", "another body in view (12% of the frame), no face",
         "画面中有另一人的身体（占画面 12%），未见其脸",
         "another body in view (12% of the frame), no face"),
        ("camera-covered", "brightness 8, contrast 1.2", "摄像头被遮挡：亮度 8，对比度 1.2",
         "the camera is covered: brightness 8, contrast 1.2"),
        ("camera-frozen", "the picture does not change at all", "画面静止不动", "the picture does not change at all"),
        ("left-area", "nobody in front of the camera", "镜头前无人（离开比赛区域）",
         "nobody in front of the camera"),
        ("camera-lost", "no picture from the camera", "摄像头无画面", "no picture from the camera"),
        ("virtual-background", "the background does not move: its lower-third change 0.10, its brightness varies by "
         "0.20, the person's by 1.50 over 20 s (ask for the pan check)",
         "背景完全不动，疑为虚拟背景：下部三分之一变化 0.10，亮度波动 0.20，人物亮度波动 1.50，"
         "统计 20 秒（请进行转动检查）",
         "the background does not move: its lower-third change 0.10, its brightness varies by 0.20, the person's by "
         "1.50 over 20 s (ask for the pan check)"),
        ("virtual-background", "the background does not follow the camera: its brightness stayed within 0.2% over 8 s "
         "while the person's changed by 3.1% (ask for the pan check)",
         "背景不随摄像头曝光变化，疑为虚拟背景：8 秒内背景亮度变化不超过 0.2%，而人物亮度变化 3.1%（请进行转动检查）",
         "the background does not follow the camera: its brightness stayed within 0.2% over 8 s while the person's "
         "changed by 3.1% (ask for the pan check)"),
        ("background-blurred", "the background is blurred: its edges' sharpness 0.12 against the person's 0.40 "
         "(36.4: the surroundings must be visible)",
         "背景被虚化：背景边缘清晰度 0.12，人物 0.40（第 36.4 条：周围环境须可见）",
         "the background is blurred: its edges' sharpness 0.12 against the person's 0.40 (36.4: the surroundings "
         "must be visible)"),
        ("background-blurred", "the background is blurred", "背景被虚化（第 36.4 条：周围环境须可见）",
         "the background is blurred"),
        ("camera-lost", "", "摄像头无画面", "no picture from the camera"),
    ],
)  # fmt: skip
def test_camera_findings_with_their_figures(kind: str, detail: str, zh: str, en: str) -> None:
    facts = IncidentFacts(kind, "detector:camera", f"{kind}: {detail}", "36.4", {"detail": detail})
    assert incident_words(facts) == {"zh": zh, "en": en}


def test_rule_incidents_name_clocks_not_milliseconds() -> None:
    summary = "after seq 7 the platform shows 750000 ms for the second player, the service 720000 ms (+30000 ms)"
    facts = IncidentFacts("clock-mismatch", "rules", summary, "34.1",
                          {"seq": 7, "platform_ms": 750_000, "service_ms": 720_000})  # fmt: skip
    assert incident_words(facts) == {
        "zh": "序号 7 之后平台显示 12:30，服务为 12:00（差 +0:30，后行方时钟）",
        "en": "after seq 7 the platform shows 12:30, the service 12:00 (+0:30 on the second player's clock)",
    }
    refused = IncidentFacts("platform-disagreement", "rules", "the platform accepted 'move' (seq 9) that the rules "
                            "refuse: h8 is taken", "13.2",
                            {"seq": 9, "type": "move", "data": {"point": "h8"}})  # fmt: skip
    assert incident_words(refused) == {
        "zh": "平台接受了规则拒绝的着法（序号 9，第 13.2 条）",
        "en": "the platform accepted a move (seq 9) that the rules refuse (art. 13.2)",
    }
    gap = IncidentFacts("feed-gap", "feed", "feed gap: seq 4 has not arrived for 12 s; 2 later event(s) are held",
                        None, {"missing_seq": 4, "held": [5, 6]})  # fmt: skip
    assert incident_words(gap) == {"zh": "数据流缺口：序号 4 已 12 秒 未到，后续 2 个事件暂存",
                                   "en": "feed gap: seq 4 has not arrived for 12 s; 2 later event(s) held"}  # fmt: skip


def test_a_pending_verdict_says_who_was_absent_for_how_long() -> None:
    facts = {"termination": "no-show", "article": "35.3", "winner": "white", "double_loss": False,
             "players": [{"player": "p-b", "colour": "black", "why": "not-arrived", "absent_ms": 62_000}]}  # fmt: skip
    words = incident_words(
        IncidentFacts("verdict-pending", "rules", "x", "35.3", {"verdict": facts}), {"p-b": "王小明"}
    )
    assert words == {
        "zh": "黑方（王小明）未到场：自预定开始起缺席 1 分 2 秒；待确认的裁决：未到场（第 35.3 条），白方胜",
        "en": "Black (王小明) did not arrive: absent 1 min 2 s since the scheduled start; verdict to confirm: no-show "
        "(art. 35.3), White wins",
    }


def test_user_data_is_shown_as_written() -> None:
    arbiter = IncidentFacts("earphones", "arbiter:张裁判", "earbud visible")
    assert incident_words(arbiter) == {"zh": "earbud visible", "en": "earbud visible"}
    leave = IncidentFacts("leave-request", "player", "p-1 asks to leave the competition area: 去洗手间", "36.4.1",
                          player="p-1")  # fmt: skip
    assert incident_words(leave) == {
        "zh": "申请离开比赛区域：去洗手间",
        "en": "asks to leave the competition area: 去洗手间",
    }


def test_an_old_row_with_only_english_keeps_it_in_english() -> None:
    """A camera finding stored before its detail was kept: said by its kind in Chinese, as stored in English."""
    old = IncidentFacts("some-old-kind", "service", "something the service said once")
    assert incident_words(old) == {"zh": "其他（some-old-kind）", "en": "something the service said once"}
    check_bilingual(incident_words(IncidentFacts("camera-covered", "detector:camera", "camera-covered: odd")))


def test_a_time_adjustment_says_the_clock_before_and_after() -> None:
    facts = LineFacts("time-adjusted", "30000 ms added to the second player's clock", Seat("white", "Li"),
                      before_ms=750_000, after_ms=780_000, delta_ms=30_000)  # fmt: skip
    assert line_words(facts) == {"zh": "白方（Li）：时钟 12:30 → 13:00（增加 30 秒）",
                                 "en": "White (Li): clock 12:30 → 13:00 (30 s added)"}  # fmt: skip


# --- The API sends both -------------------------------------------------------------------------------------------


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=600_000, feed_gap_timeout_s=0.5,
                    media_dir=str(tmp_path / "media"))  # fmt: skip


async def _json(platform: Platformer, path: str, token: str) -> Any:
    response = await platform.client.get(path, headers=bearer(token))
    assert response.status == 200, path
    return await response.json()


@pytest.mark.asyncio
async def test_a_timeline_carries_both_languages(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    timeline = await _json(platform, f"/api/v1/games/{played['game']}/timeline", reviewer)
    names = ("王小明", "Li <Na>", "张裁判")
    lines = [e for e in timeline["events"] if e["type"] in ("clock", "penalty", "verdict", "game")]
    assert lines
    for line in lines:
        check_bilingual(line["text_words"], *names)
        assert not re.search(r"\d ms\b", line["text_words"]["en"] + line["text_words"]["zh"]), line
    adjusted = next(e for e in lines if e["kind"] == "time-adjusted")
    assert re.fullmatch(r"White \(Li <Na>\): clock \d+:\d\d → \d+:\d\d \(30 s added\)", adjusted["text_words"]["en"])
    assert adjusted["text_words"]["zh"].startswith("白方（Li <Na>）：时钟 ")
    incidents = [e for e in timeline["events"] if e["type"] == "incident"]
    lost = next(e for e in incidents if e["kind"] == "camera-lost")
    assert lost["summary_words"] == {"zh": "摄像头无画面", "en": "no frames for 5 s"}  # the detector's words, as stored
    reported = next(e for e in incidents if e["kind"] == "earphones")
    assert reported["summary_words"] == {"zh": 'earbud <b>visible</b> & "loud"', "en": 'earbud <b>visible</b> & "loud"'}


@pytest.mark.asyncio
async def test_a_case_and_an_answer_carry_both_languages(platform: Platformer, settings: Settings) -> None:
    played = await reviewed_game(platform, settings)
    arbiter = played["arbiter"]
    at = time.time()
    detail = "2 faces in view"
    await camera_finding(platform, "rv-b", Finding(Check.EXTRA_PERSON, at, None, detail), None)
    page = await _json(platform, "/api/v1/cases?kind=extra-person&status=", arbiter)
    (case,) = page["cases"]
    assert case["summary"] == f"extra-person: {detail}"  # the old field, as before
    assert case["summary_words"] == {"zh": "画面中有 2 张脸", "en": "2 faces in view"}
    full = await _json(platform, f"/api/v1/cases/{case['id']}", arbiter)
    (occurrence,) = full["occurrences"]
    assert occurrence["summary_words"] == case["summary_words"]
    incidents = await _json(platform, f"/api/v1/incidents?game={played['game']}", arbiter)
    listed = incidents if isinstance(incidents, list) else incidents["incidents"]
    for incident in listed:
        if incident["source"].startswith("arbiter:"):  # the arbiter's own words, as written
            assert incident["summary_words"] == dict.fromkeys(("zh", "en"), incident["summary"])
        else:
            check_bilingual(incident["summary_words"])
    # The answer to an action on a live game says what changed.
    second = await platform.send("game.created", "words-2", {
        "black": {"id": "w2-b", "name": "Wang"}, "white": {"id": "w2-w", "name": "Li"}, "rule": "renju",
        "time_control": "rapid-15", "start_at": iso(int(time.time() * 1000) - 5_000)})  # fmt: skip
    game = int(second[1]["game"])
    for side in "bw":
        await platform.send("player.joined", "words-2", {"player": f"w2-{side}"})
    status, answer = await act(platform, arbiter, f"/api/v1/games/{game}/actions",
                               {"action": "adjust", "player": "w2-w", "delta_ms": 30_000,
                                "reason": "lost time"})  # fmt: skip
    assert status == 200
    assert re.fullmatch(r"White \(Li\): clock 15:00 → 15:30 \(30 s added\)", answer["said"]["en"]), answer["said"]
    assert answer["said"]["zh"] == "白方（Li）：时钟 15:00 → 15:30（增加 30 秒）"
    status, answer = await act(platform, arbiter, f"/api/v1/games/{game}/actions", {"action": "pause", "reason": "x"})
    assert status == 200
    check_bilingual(answer["said"])


def test_the_module_is_pure() -> None:
    tree = ast.parse(Path(server_words.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names} | {node.module.split(".")[0] for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
    assert not imported & {"aiohttp", "sqlalchemy", "sqlmodel", "cv2", "asyncio", "aiortc"}


# --- Refusals -----------------------------------------------------------------------------------------------------


def test_every_refusal_has_its_chinese() -> None:
    code = "".join(path.read_text(encoding="utf-8") for top in ("engine", "proctor")
                   for path in (ROOT / top).rglob("*.py") if path.name != "server_words.py")  # fmt: skip
    for pattern, key in server_words.REFUSALS:
        assert f"refuse.{key}" in server_words.REFUSED["zh"], key
        # The code still says it (a refusal reworded there fails here, not silently in English on the desk).
        parts = re.split(r"\(\?P<\w+>[^)]*\)|\\[()]|\.\*|\s*:\s*| ms\b|\^|\$", pattern.pattern)
        for part in [p.strip() for p in parts if len(p.strip()) > 8]:
            assert part in code, (key, part)
    for text in server_words.REFUSED["en"].values():
        assert not CJK.search(text)
    for code in ("bad-request", "not-found", "conflict", "refused", "authority", "internal"):
        words = server_words.refusal_words(code, "something went wrong")
        assert words["en"] == "something went wrong" and CJK.search(words["zh"])


@pytest.mark.asyncio
async def test_a_refused_action_answers_in_both_languages(platform: Platformer, settings: Settings) -> None:
    arbiter = add_arbiter(settings, "Chief", "chief")
    await platform.send("game.created", "words-3", {
        "black": {"id": "w3-b", "name": "Wang"}, "white": {"id": "w3-w", "name": "Li"}, "rule": "renju",
        "time_control": "rapid-15", "start_at": iso(int(time.time() * 1000) - 5_000)})  # fmt: skip
    for side in "bw":
        await platform.send("player.joined", "words-3", {"player": f"w3-{side}"})
    status, created = await act(platform, arbiter, "/api/v1/games/1/actions", {"action": "pause", "reason": "x"})
    assert status == 200, created
    status, refused = await act(platform, arbiter, "/api/v1/games/1/actions", {"action": "pause", "reason": "x"})
    assert status == 409
    assert refused["message_words"] == {"zh": "裁判已停止计时", "en": refused["message"]}
    await act(platform, arbiter, "/api/v1/games/1/actions", {"action": "resume", "reason": "x"})
    too_much = {"action": "adjust", "player": "w3-w", "delta_ms": -1_200_000, "reason": "x"}
    status, refused = await act(platform, arbiter, "/api/v1/games/1/actions", too_much)
    assert status == 409, refused
    assert refused["message_words"] == {"zh": "无法减少 20 分 0 秒：只剩 15:00",
                                        "en": "cannot remove 20 min 0 s: only 15:00 remain"}  # fmt: skip
    status, refused = await act(platform, arbiter, "/api/v1/games/1/actions", {"action": "fly", "reason": "x"})
    assert status == 400
    assert refused["message_words"] == {"zh": "请求有误", "en": refused["message"]}


def test_the_chinese_report_says_a_camera_finding_with_its_figures() -> None:
    found = stored_incident(1, "extra-person", 1_700_000_000_000, player="p1", evidence={"detail": "3 faces in view"})
    report = build_report(source([found], [case(1, "extra-person", [found], player="p1")]), "zh", 1_700_000_100_000)
    (section,) = report.sections
    assert section.occurrences[0][1].startswith("画面中有 3 张脸（来源："), section.occurrences


@pytest.mark.asyncio
async def test_rule_incidents_and_a_forbidden_move_in_both_languages(platform: Platformer, settings: Settings) -> None:
    """A refused delivery (an occupied point), a forbidden 3-3 ruled by the service and the platform's different
    claim, each said in both languages on the game's view and its timeline."""
    await platform.create("fw")
    await join_both(platform, "fw")
    await platform.send("move", "fw", {"point": "h8"}, at=T0 + 1_000)
    status, answer = await platform.send("move", "fw", {"point": "h8"}, at=T0 + 1_500)
    assert (status, answer["status"]) == (200, "refused")
    moves = ["o15", "h9", "o13", "i10", "o11", "j10", "o9", "h10"]
    for index, point in enumerate(moves, start=2):
        await platform.send("move", "fw", {"point": point}, at=T0 + index * 1_000)
    await platform.send("game.ended", "fw", {"result": "black", "reason": "five"}, at=T0 + 20_000)
    state = await game_state(platform, "fw")
    said = {i["kind"]: i["summary_words"] for i in state["incidents"]}
    assert said["platform-disagreement"] == {
        "zh": "平台接受了规则拒绝的着法（序号 5，第 6.1 条）",
        "en": "the platform accepted a move (seq 5) that the rules refuse (art. 6.1)",
    }
    assert said["result-mismatch"] == {
        "zh": "平台报告黑方胜（五连）；服务的结果为白方胜（禁手（三三），第 8.1, 19.1.2, 35.1 条）",
        "en": "the platform claims Black wins (five in a row); the service has White wins (forbidden 3-3, art. 8.1, "
        "19.1.2, 35.1)",
    }
    reviewer = add_arbiter(settings, "Panel", "reviewer")
    timeline = await _json(platform, f"/api/v1/games/{state['id']}/timeline", reviewer)
    (verdict,) = [e for e in timeline["events"] if e.get("kind") == "verdict"]
    assert verdict["text_words"] == {"zh": "裁决：禁手（三三），白方胜", "en": "verdict: forbidden 3-3, White wins"}
