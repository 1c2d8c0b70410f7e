"""The incident report's model, built without I/O (proctor.incident_report.build_report): cases with occurrences
grouped per player and kind, the arbiters' and the service's actions on a case in words, a pending verdict's facts,
an incident that joined no case, both languages complete and the time zone named."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from proctor.cases import ActionTaken, CaseFile, Occurrence
from proctor.incident_report import MediaFile, ReportSource, build_report, language_of
from proctor.report_words import WORDS
from proctor.review import IncidentFilter
from proctor.time_zones import local_time

T0 = 1_767_225_600_000
"""2026-01-01 00:00 UTC: 08:00 in Shanghai."""
ZONE = "Asia/Shanghai"


def incident(
    iid: int, kind: str, at: int, *, player: str | None = None, game: int | None = 7,
    actions: list[dict[str, Any]] | None = None, evidence: dict[str, Any] | None = None,
    source: str = "detector:camera", article: str | None = "36.4", status: str = "open",
) -> dict[str, Any]:  # fmt: skip
    return {"id": iid, "game": game, "player": player, "kind": kind, "source": source, "article": article,
            "confidence": None, "summary": f"{kind}: the detector's words", "evidence": evidence or {}, "at": at,
            "actions": actions or [], "status": status}  # fmt: skip


def note(at: int, text: str, arbiter: str = "detector:camera") -> dict[str, Any]:
    return {"arbiter": arbiter, "role": "arbiter", "action": "note", "note": text, "verdict": None, "at": at}


def case(cid: int, kind: str, incidents: list[dict[str, Any]], actions: tuple[ActionTaken, ...] = (),
         player: str | None = None) -> CaseFile:  # fmt: skip
    occurrences = tuple(Occurrence(i["id"], i["at"], i["summary"], i["source"], i["article"], None, i["evidence"],
                                   i["game"]) for i in incidents)  # fmt: skip
    key = f"player:{player}/{kind}" if player else f"game:7/{kind}"
    return CaseFile(cid, key, kind, player, incidents[0]["at"], None, None, occurrences, actions)


def source(incidents: list[dict[str, Any]], cases: list[CaseFile]) -> ReportSource:
    return ReportSource(
        title="全国赛", where=IncidentFilter(kind=None), incidents=tuple(incidents), cases=tuple(cases),
        names={"p1": "王小明", "p2": "Li Na"}, games={}, zone=ZONE, chief="陈裁判长",
        media={"a.jpg": MediaFile("h-a", b"\xff\xd8jpeg")},
    )  # fmt: skip


def verdict_evidence() -> dict[str, Any]:
    return {"verdict": {"termination": "no-show", "article": "14.3, 35.3", "winner": "black", "double_loss": False,
                        "at": T0 + 900_000, "players": [{"player": "p2", "colour": "white", "why": "not-arrived",
                                                        "since_ms": T0, "absent_ms": 900_000}]}}  # fmt: skip


def scenario() -> ReportSource:
    """p1's camera lost twice (40 s and 80 s: escalated past 1 min, then dismissed); a no-show waiting for the
    arbiter, confirmed by the chief; an old incident that joined no case."""
    lost = [
        incident(1, "camera-lost", T0, player="p1", actions=[note(T0 + 40_000, "ended after 40 s")],
                 evidence={"media": ["a.jpg"], "sha256": "h-a"}),
        incident(2, "camera-lost", T0 + 60_000, player="p1", actions=[note(T0 + 140_000, "ended after 80 s")]),
    ]  # fmt: skip
    camera = case(10, "camera-lost", lost, (
        ActionTaken(1, T0 + 140_000, "service", "arbiter", "escalate", "",
                    {"step": "duration:60000", "reason": "total duration over 1 min", "threshold_ms": 60_000}),
        ActionTaken(2, T0 + 200_000, "张裁判", "arbiter", "dismiss", "网络故障，已核实", {}),
    ), player="p1")  # fmt: skip
    pending = incident(3, "verdict-pending", T0 + 900_000, source="rules", article="14.3, 35.3",
                       evidence=verdict_evidence())  # fmt: skip
    verdict = case(11, "verdict-pending", [pending], (
        ActionTaken(3, T0 + 960_000, "service", "arbiter", "escalate", "",
                    {"step": "confirmation-deadline", "reason": "the confirmation deadline passed", "for": "chief"}),
        ActionTaken(4, T0 + 1_000_000, "陈裁判长", "chief", "confirm", "",
                    {"result": "black", "reason": "no-show", "article": "14.3, 35.3"}),
    ))  # fmt: skip
    loose = incident(4, "feed-gap", T0 + 5_000, source="feed", article="31.2", status="dismiss",
                     evidence={"missing_seq": 12, "held": [13, 14]})  # fmt: skip
    return source([*lost, pending, loose], [camera, verdict])


def test_both_languages_have_every_word() -> None:
    assert WORDS["zh"].keys() == WORDS["en"].keys()
    assert language_of({}) == "zh" and language_of({"lang": "en"}) == "en"


def test_the_report_groups_cases_and_says_the_actions_in_words() -> None:
    report = build_report(scenario(), "zh", T0 + 2_000_000)
    assert report.zone_line == "时间：Asia/Shanghai (UTC+08:00)，24 小时制"
    assert report.generated.startswith("报告生成于 2026-01-01 08:33:20。")
    assert "共 3 个案件，4 次发生" in report.generated

    def at(ms: int) -> str:
        return local_time(ms, ZONE)

    rows = [(r.who, r.kind, r.cases, r.occurrences, r.duration, r.first, r.last, r.outcome) for r in report.summary]
    assert rows == [
        ("对局 #7", "数据流缺口", 1, 1, "—", at(T0 + 5_000), at(T0 + 5_000), "已驳回"),
        ("对局 #7", "待确认的裁决", 1, 1, "—", at(T0 + 900_000), at(T0 + 900_000), "已确认"),
        ("王小明", "摄像头断开", 1, 2, "2 分 0 秒", at(T0), at(T0 + 60_000), "已驳回"),
    ]  # fmt: skip
    camera, loose, verdict = report.sections  # by first occurrence
    assert camera.heading == "案件 #10：摄像头断开 · 王小明" and loose.heading == "事件 #4：数据流缺口 · 对局 #7"
    assert [a.what for a in camera.actions] == [
        "检测到结束：持续 40 秒", "检测到结束：持续 1 分 20 秒", "升级：累计时长超过 1 分钟",
        "驳回此案。理由：网络故障，已核实",
    ]  # fmt: skip
    assert [a.who for a in camera.actions] == ["检测器", "检测器", "系统", "张裁判（裁判）"]
    assert camera.verdict == "已驳回：网络故障，已核实，第 36.4 条"
    (still,) = camera.evidence
    assert (still.name, still.sha256, still.check, still.still) == ("a.jpg", "h-a", "与文件一致", b"\xff\xd8jpeg")
    assert loose.occurrences[0][1] == "数据流缺口：序号 12 未到，后续 2 个事件暂存（来源：数据流）"
    assert verdict.occurrences[0][1].startswith("白方（Li Na）未到场：自预定开始起缺席 15 分 0 秒；待确认的裁决")
    assert [a.what for a in verdict.actions] == [
        "升级至裁判长：确认期限已过（系统不自动裁决）", "确认裁决：黑方胜（未到场，第 14.3, 35.3 条）",
    ]  # fmt: skip
    assert verdict.actions[1].who == "陈裁判长（裁判长）"
    assert verdict.verdict == "已确认：黑方胜（未到场，第 14.3, 35.3 条）"
    assert (report.signature.name, report.signature.heading) == ("陈裁判长", "裁判长签字")


def test_the_english_report_says_the_same_in_english() -> None:
    report = build_report(scenario(), "en", T0 + 2_000_000)
    assert report.zone_line == "Times: Asia/Shanghai (UTC+08:00), 24-hour"
    camera, _, verdict = report.sections
    assert camera.heading == "Case 10: camera lost · 王小明"
    assert camera.occurrences[0][1] == "camera-lost: the detector's words (source: detector, lasted 40 s)"
    assert [a.what for a in camera.actions][2:] == ["escalated: total duration over 1 min",
                                                    "dismissed the case. Reason: 网络故障，已核实"]  # fmt: skip
    assert verdict.verdict == "confirmed: Black wins (no-show, art. 14.3, 35.3)"
    assert verdict.occurrences[0][1].startswith("White (Li Na) did not arrive: absent 15 min 0 s since the scheduled")
    assert report.signature.heading == "Chief arbiter's signature"
    several = build_report(replace(scenario(), title=""), "en", T0)
    assert several.heading == "All events: incident report"
    assert build_report(replace(scenario(), title=""), "zh", T0).heading == "全部赛事：事件报告"


def test_a_case_shows_at_most_six_stills_and_lists_every_file() -> None:
    stills = [incident(i, "extra-person", T0 + i * 1000, player="p1", evidence={"media": [f"{i}.jpg"], "sha256": "h"})
              for i in range(1, 9)]  # fmt: skip
    media = {f"{i}.jpg": MediaFile("h" if i % 2 else "other", b"\xff\xd8") for i in range(1, 9)}
    built = replace(source(stills, [case(5, "extra-person", stills, player="p1")]), media=media)
    report = build_report(built, "en", T0)
    (section,) = report.sections
    assert len(section.evidence) == 8 and sum(item.still is not None for item in section.evidence) == 6
    assert [item.check for item in section.evidence[:2]] == ["matches the file", "does NOT match the file!"]
    (row,) = report.summary
    assert (row.who, row.kind, row.cases, row.occurrences, row.outcome) == ("王小明", "another person", 1, 8, "open")
