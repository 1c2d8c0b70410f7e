"""Issue 13, cases: findings grouped per player (or game) and kind, re-alerting only by rule; the arbiters' actions on
cases within their assignment (16); a pending verdict as the most urgent case, escalated to the chief after its
deadline (the time passed in); paging that drops nothing; the case rows under the audit."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text

from proctor.account_log import record_account
from proctor.camera import DETECTOR
from proctor.database import create_database_engine
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.proctor.conftest import Platformer, app_context, iso, reader
from tests.security.test_integrity_assignments import arbiters, bearer, started

CHIEF, WANG, ZHAO, CHEN = bearer("Li"), bearer("Wang"), bearer("Zhao"), bearer("Chen")
"""Li is the chief arbiter, Chen a deputy chief (assigned youth-m); Wang is assigned youth-m, Zhao its board 2."""
MEN, WOMEN = "national-youth-2021/youth-m", "national-youth-2021/youth-f"


def record_stream(platform: Platformer) -> list[tuple[str, dict[str, Any]]]:
    """Every message published on the live stream from now on."""
    context = app_context(platform)
    seen: list[tuple[str, dict[str, Any]]] = []
    publish = context.bus.publish_many

    def recording(messages: list[tuple[str, dict[str, Any]]]) -> None:
        seen.extend(messages)
        publish(messages)

    context.bus.publish_many = recording
    return seen


def case_events(seen: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [payload for kind, payload in seen if kind == "case"]


async def finding(
    platform: Platformer, game: int | None, player: str | None, at: int, kind: str = "extra-person"
) -> int:
    """A camera finding as the detector raises it (proctor.camera), with its snapshot."""
    context = app_context(platform)
    evidence = {"started": at / 1000, "media": [f"youth-m/{at}-{kind}.jpg"], "sha256": f"{at:064x}"[-64:]}
    incident: int = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, kind, f"{kind}: a second person", source="detector:camera", article="36.4.3",
            evidence=evidence, player_ref=player, at=at, confidence=0.9,
        )
    )  # fmt: skip
    return incident


async def ended(platform: Platformer, incident: int, seconds: int) -> None:
    """The detector's note when the finding ends (proctor.camera)."""
    context = app_context(platform)
    await context.writer.submit(
        lambda connection, batch: context.service.act_on_incident(
            connection, batch, incident, DETECTOR, "note", f"ended after {seconds} s", None, None, now_ms()
        )
    )


async def get(platform: Platformer, path: str, headers: dict[str, str] = CHIEF) -> Any:
    response = await platform.client.get(path, headers=headers)
    assert response.status == 200, await response.text()
    return await response.json()


async def act(
    platform: Platformer, case: int, body: dict[str, Any], headers: dict[str, str] = CHIEF
) -> tuple[int, Any]:
    response = await platform.client.post(f"/api/v1/cases/{case}/actions", json=body, headers=headers)
    return response.status, await response.json()


async def test_sixteen_findings_of_one_player_are_one_case_with_sixteen_occurrences(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    seen = record_stream(platform)
    start = now_ms() - 600_000
    incidents = [await finding(platform, game, "youth-m-p1", start + 30_000 * n) for n in range(16)]
    for n, incident in enumerate(incidents):
        await ended(platform, incident, 25 if n == 7 else 2)
    page = await get(platform, "/api/v1/cases?player=youth-m-p1")
    assert page["total"] == 1 and page["next"] is None
    (case,) = page["cases"]
    assert (case["kind"], case["status"], case["occurrence_count"]) == ("extra-person", "open", 16)
    assert (case["first"], case["last"], case["opened"]) == (start, start + 15 * 30_000, start)
    assert case["duration_ms"] == 15 * 2_000 + 25_000
    assert case["evidence"]["incident"] == incidents[7]  # the longest occurrence's snapshot
    assert case["evidence"]["media"] == [f"youth-m/{start + 7 * 30_000}-extra-person.jpg"]
    assert case["player"] == {"id": "youth-m-p1", "name": case["player"]["name"]} and case["player"]["name"]
    assert (case["event"], case["section"], case["round"], case["board"]) == ("national-youth-2021", "youth-m", 1, 1)
    assert case["article"] == "36.4.3" and case["alert"] is None
    full = await get(platform, f"/api/v1/cases/{case['id']}")
    assert [o["incident"] for o in full["occurrences"]] == incidents and full["actions"] == []
    assert full["occurrences"][7]["duration_ms"] == 25_000
    # The desk was alerted once, when the case opened; the other 15 joined it quietly.
    events = case_events(seen)
    assert [(e["change"], e["alert"]) for e in events[:2]] == [("opened", True), ("occurrence", False)]
    assert sum(e["alert"] for e in events) == 1 and [e["occurrences"] for e in events] == list(range(1, 17))
    # Another kind, or another player, is another case.
    await finding(platform, game, "youth-m-p1", start, kind="left-area")
    await finding(platform, game, "youth-m-p3", start)
    assert (await get(platform, "/api/v1/cases"))["total"] == 3


async def test_a_dismissed_case_that_happens_again_opens_a_new_case_that_re_alerts(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    first = await finding(platform, game, "youth-m-p1", now_ms() - 60_000)
    (case,) = (await get(platform, "/api/v1/cases"))["cases"]
    status, answer = await act(platform, case["id"], {"action": "dismiss"})
    assert status == 400 and "reason" in answer["message"]  # a dismissal says why
    status, answer = await act(platform, case["id"], {"action": "dismiss", "reason": "his coach, leaving the room"})
    assert (status, answer) == (201, {"case": case["id"], "action": "dismiss", "status": "dismissed"})
    status, answer = await act(platform, case["id"], {"action": "confirm"})
    assert status == 409 and "already dismissed" in answer["message"]
    seen = record_stream(platform)
    again = await finding(platform, game, "youth-m-p1", now_ms())
    page = await get(platform, "/api/v1/cases?player=youth-m-p1")
    assert page["total"] == 2
    new, old = page["cases"]  # the open one first
    assert (new["status"], new["follows"], new["follows_status"]) == ("open", case["id"], "dismissed")
    assert new["alert"]["reason"] == "again after dismissed" and new["urgency"] == 2
    assert (old["id"], old["status"], old["occurrence_count"]) == (case["id"], "dismissed", 1)
    old_full = await get(platform, f"/api/v1/cases/{case['id']}")
    assert [o["incident"] for o in old_full["occurrences"]] == [first]  # a closed case never changes again
    assert [(a["action"], a["by"], a["note"]) for a in old_full["actions"]] == [
        ("dismiss", "Li-chief", "his coach, leaving the room")
    ]
    (event,) = case_events(seen)
    assert (event["change"], event["alert"], event["alert_reason"], event["follows"]) == (
        "opened", True, "again after dismissed", case["id"])  # fmt: skip
    assert [o["incident"] for o in (await get(platform, f"/api/v1/cases/{new['id']}"))["occurrences"]] == [again]
    assert (await get(platform, "/api/v1/cases?status=dismissed"))["total"] == 1
    assert (await get(platform, "/api/v1/cases?status=closed"))["total"] == 1
    assert (await get(platform, "/api/v1/cases?status=open"))["total"] == 1


async def test_an_incident_carries_its_case_and_a_closed_case_s_incidents_are_no_longer_open_on_the_desk(
    platform: Platformer, settings: Settings
) -> None:
    """The desk's board badge counts the open incidents of a game: those of a closed case no longer count, though
    their own status (their last action: none, or a detector's note) does not change when the case closes."""
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    first = await finding(platform, game, "youth-m-p1", now_ms() - 60_000)
    second = await finding(platform, game, "youth-m-p1", now_ms() - 30_000)
    await ended(platform, second, 3)
    (case,) = (await get(platform, "/api/v1/cases"))["cases"]
    listed = await get(platform, f"/api/v1/incidents?game={game}")
    assert {i["id"]: i["case"] for i in listed} == {
        first: {"id": case["id"], "status": "open"}, second: {"id": case["id"], "status": "open"}}  # fmt: skip
    assert (await act(platform, case["id"], {"action": "confirm", "reason": "seen on the room camera"}))[0] == 201
    listed = await get(platform, f"/api/v1/incidents?game={game}")
    assert {i["id"]: (i["status"], i["case"]["status"]) for i in listed} == {
        first: ("open", "confirmed"), second: ("note", "confirmed")}  # fmt: skip
    view = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1")
    assert {i["id"]: i["case"]["status"] for i in view["incidents"]} == {first: "confirmed", second: "confirmed"}
    # A finding after the case was closed opens a new case: its incident is open again.
    again = await finding(platform, game, "youth-m-p1", now_ms())
    listed = await get(platform, f"/api/v1/incidents?game={game}&status=open")
    assert {i["id"]: i["case"]["status"] for i in listed} == {first: "confirmed", again: "open"}


async def test_a_case_re_alerts_when_its_total_duration_crosses_a_step(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    seen = record_stream(platform)
    one = await finding(platform, game, "youth-m-p1", now_ms() - 100_000, kind="left-area")
    await ended(platform, one, 40)
    two = await finding(platform, game, "youth-m-p1", now_ms() - 50_000, kind="left-area")
    (case,) = (await get(platform, "/api/v1/cases"))["cases"]
    assert case["alert"] is None and case["duration_ms"] == 40_000
    await ended(platform, two, 30)  # 70 s in all: over the first step (1 min)
    three = await finding(platform, game, "youth-m-p1", now_ms(), kind="left-area")
    await ended(platform, three, 20)  # 90 s: no new step
    (case,) = (await get(platform, "/api/v1/cases"))["cases"]
    assert case["alert"]["reason"] == "total duration over 1 min" and case["alert"]["for"] is None
    assert case["urgency"] == 2 and case["duration_ms"] == 90_000 and case["status"] == "open"
    actions = (await get(platform, f"/api/v1/cases/{case['id']}"))["actions"]
    assert [(a["action"], a["by"], a["detail"]["threshold_ms"]) for a in actions] == [("escalate", "service", 60_000)]
    alerts = [(e["change"], e["alert_reason"]) for e in case_events(seen) if e["alert"]]
    assert alerts == [("opened", "opened"), ("escalated", "total duration over 1 min")]


async def test_clock_mismatches_of_a_game_collapse_into_one_case(platform: Platformer) -> None:
    headers = reader(platform)
    start = now_ms() - 120_000  # (a start far in the past would have the timer rule a flag fall first)
    await platform.create("cm1", time_control="rapid-15", start=start)
    for player in ("cm1-b", "cm1-w"):
        await platform.send("player.joined", "cm1", {"player": player}, at=start - 1000)
    points = ["h8", "h9", "i8", "i9", "j8", "j9"]
    for n, point in enumerate(points):
        move = {"point": point, "clock_ms": 60_000}
        status, body = await platform.send("move", "cm1", move, at=start + 10_000 * n)
        assert status == 200, body
    incidents = await get(platform, "/api/v1/incidents?kind=clock-mismatch", headers)
    assert len(incidents) == len(points)
    page = await get(platform, "/api/v1/cases", headers)
    (case,) = page["cases"]
    assert (case["kind"], case["occurrence_count"], case["player"], case["article"]) == (
        "clock-mismatch", len(points), None, "34.1")  # fmt: skip
    assert case["game"] == incidents[0]["game"] and case["duration_ms"] is None
    assert (await get(platform, f"/api/v1/cases?game={case['game']}&kind=clock-mismatch", headers))["total"] == 1


async def test_case_actions_respect_the_role_and_the_assignment(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    panel = reader(platform)
    men = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    women = await started(platform, "youth-f-r1-b1", "youth-f-p1", "youth-f-p3")
    at = now_ms()
    await finding(platform, men, "youth-m-p1", at)
    await finding(platform, women, "youth-f-p1", at)
    await finding(platform, women, "youth-f-p3", at)
    cases = {c["player"]["id"]: c["id"] for c in (await get(platform, "/api/v1/cases"))["cases"]}
    assert (await get(platform, f"/api/v1/cases?section={WOMEN}"))["total"] == 2
    assert (await get(platform, f"/api/v1/cases?section={MEN}/1"))["total"] == 1
    assert (await get(platform, "/api/v1/cases?board=1"))["total"] == 3
    dismiss = {"action": "dismiss", "reason": "a reflection"}
    status, answer = await act(platform, cases["youth-f-p1"], dismiss, WANG)
    assert (status, answer["error"], answer["article"]) == (403, "forbidden", "16") and "youth-f" in answer["message"]
    status, answer = await act(platform, cases["youth-m-p1"], dismiss, ZHAO)
    assert status == 403, answer  # board 2 of the section, not board 1
    status, answer = await act(platform, cases["youth-m-p1"], dismiss, panel)
    assert status == 403, answer  # the review panel reads only
    status, answer = await act(platform, cases["youth-m-p1"], {"action": "confirm", "reason": "seen"}, WANG)
    assert (status, answer["status"]) == (201, "confirmed")
    status, answer = await act(platform, cases["youth-f-p1"], {"action": "overrule"}, CHEN)
    assert status == 400, answer  # only a pending verdict is overruled
    # Bulk: all or none.  Wang may not dismiss the women's cases: nothing changes.
    bulk = {"action": "dismiss", "reason": "the detector saw a poster", "cases": list(cases.values())}
    response = await platform.client.post("/api/v1/cases/actions", json=bulk, headers=WANG)
    assert response.status == 403
    assert (await get(platform, "/api/v1/cases?status=open"))["total"] == 2
    response = await platform.client.post("/api/v1/cases/actions", json=bulk, headers=CHEN)
    assert response.status == 409  # one of them is already confirmed
    bulk["cases"] = [cases["youth-f-p1"], cases["youth-f-p3"]]
    response = await platform.client.post("/api/v1/cases/actions", json=bulk, headers=CHEN)
    assert response.status == 201, await response.text()  # a deputy chief acts everywhere
    assert [a["status"] for a in (await response.json())["cases"]] == ["dismissed", "dismissed"]
    assert (await get(platform, "/api/v1/cases?status=open"))["total"] == 0
    for bad in ([], [0], ["1"], [cases["youth-f-p1"]] * 2):
        response = await platform.client.post("/api/v1/cases/actions", json={**bulk, "cases": bad}, headers=CHEN)
        assert response.status == 400, bad
    response = await platform.client.post("/api/v1/cases/actions", json={**bulk, "cases": [99_999]}, headers=CHEN)
    assert response.status == 404


async def no_show(platform: Platformer, game: str, black: str, white: str, start: int) -> int:
    """A game of the example event (``confirm_time_verdicts``) whose White does not come: the no-show waits for the
    arbiter, from ``start`` on (the server's timer rules it)."""
    data = {"black": {"id": black}, "white": {"id": white}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
    status, created = await platform.send("game.created", game, data, at=start - 60_000)
    assert status == 200, created
    await platform.send("player.joined", game, {"player": black}, at=start - 30_000)
    return int(created["game"])


async def pending_case(platform: Platformer) -> dict[str, Any]:
    for _ in range(100):
        page = await get(platform, "/api/v1/cases?kind=verdict-pending")
        if page["cases"]:
            return dict(page["cases"][0])
        await asyncio.sleep(0.1)
    raise AssertionError("no pending verdict's case")


async def test_a_pending_verdict_is_a_case_at_the_top_and_escalates_to_the_chief_after_its_deadline(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    panel = reader(platform)
    men = await started(platform, "youth-m-r1-b2", "youth-m-p4", "youth-m-p2")
    await finding(platform, men, "youth-m-p4", now_ms())  # an ordinary open case, newer than the verdict
    start = now_ms() + 1500
    game = await no_show(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3", start)
    seen = record_stream(platform)
    case = await pending_case(platform)
    queue = (await get(platform, "/api/v1/cases"))["cases"]
    assert [c["kind"] for c in queue] == ["verdict-pending", "extra-person"]  # the verdict first
    assert (case["urgency"], case["article"], case["game"], case["board"]) == (1, "14.3, 35.3", game, 1)
    verdict = case["verdict"]
    assert (verdict["termination"], verdict["winner"], verdict["article"]) == ("no-show", "black", "14.3, 35.3")
    (absent,) = verdict["players"]
    assert (absent["player"], absent["name"], absent["colour"]) == ("youth-m-p3", "Male Youth Player 3", "white")
    assert absent["why"] == "not-arrived" and absent["absent_ms"] == verdict["at"] - start
    assert verdict["text"].startswith("White (Male Youth Player 3) did not arrive: absent 0 s since the scheduled")
    assert "The verdict (no-show, 14.3, 35.3): black wins, unless overruled." in verdict["text"]
    view = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1", panel)
    assert view["result"] is None and view["pending_verdict"]["reason"] == "no-show"
    # The deadline (600 s, the event's verdict_confirmation_deadline_s) with the time passed in: nothing before it,
    # then an escalation to the chief, and nothing ruled.
    context = app_context(platform)

    async def escalate(at: int) -> list[int]:
        escalated: list[int] = await context.writer.submit(
            lambda connection, batch: context.service.escalate_cases(connection, batch, at)
        )
        return escalated

    assert await escalate(case["opened"] + 599_999) == []
    assert context.service.casebook.confirmation_due(case["opened"] + 599_999) is False
    assert context.service.casebook.confirmation_due(case["opened"] + 600_000) is True
    assert await escalate(case["opened"] + 600_000) == [case["id"]]
    assert await escalate(case["opened"] + 700_000) == []  # once
    case = (await get(platform, "/api/v1/cases"))["cases"][0]
    assert (case["kind"], case["urgency"], case["status"]) == ("verdict-pending", 0, "open")
    assert case["alert"] == {"reason": "the confirmation deadline passed: the chief arbiter decides",
                             "at": case["opened"] + 600_000, "for": "chief"}  # fmt: skip
    escalations = [e for e in case_events(seen) if e["change"] == "escalated"]
    assert [(e["alert"], e["alert_for"]) for e in escalations] == [(True, "chief")]
    view = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1", panel)
    assert view["result"] is None and view["pending_verdict"] is not None  # nothing ruled automatically
    # Confirm and overrule are the game's: an arbiter may not overrule (22.1), nor dismiss a verdict.
    status, answer = await act(platform, case["id"], {"action": "dismiss", "reason": "x"}, WANG)
    assert status == 400, answer
    status, answer = await act(platform, case["id"], {"action": "overrule", "add_ms": 0}, WANG)
    assert (status, answer["article"]) == (403, "22.1"), answer
    status, answer = await act(platform, case["id"], {"action": "confirm", "reason": "absent, no message"}, WANG)
    said = answer.pop("said")  # what changed, in both languages (proctor.server_words)
    assert (status, answer) == (201, {"case": case["id"], "action": "confirm", "status": "confirmed", "game": game})
    assert said == {"zh": "裁决：未到场，黑方胜", "en": "verdict: no-show, Black wins"}
    view = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1", panel)
    assert view["result"]["reason"] == "no-show" and view["result"]["winner"] == "black"
    full = await get(platform, f"/api/v1/cases/{case['id']}")
    assert [(a["action"], a["by"]) for a in full["actions"]] == [("escalate", "service"), ("confirm", "Wang-arbiter")]
    assert full["actions"][1]["detail"] == {"result": "black", "reason": "no-show", "article": "14.3, 35.3"}


async def test_a_pending_verdict_overruled_on_the_board_closes_its_case(
    platform: Platformer, settings: Settings
) -> None:
    arbiters(settings)
    game = await no_show(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3", now_ms() + 1000)
    case = await pending_case(platform)
    # The board menu's game action (not the case's) closes the case too.
    response = await platform.client.post(f"/api/v1/games/{game}/actions", headers=CHEN,
                                          json={"action": "overrule", "reason": "the platform lost him"})  # fmt: skip
    assert response.status == 200, await response.text()
    case = await get(platform, f"/api/v1/cases/{case['id']}")
    assert case["status"] == "overruled" and [a["by"] for a in case["actions"]] == ["Chen-deputy-chief"]
    assert (await get(platform, "/api/v1/cases?status=open"))["total"] == 0


async def test_a_pending_time_forfeit_overruled_on_its_case_gives_the_time_and_says_the_clock(
    platform: Platformer, settings: Settings
) -> None:
    """Black's flag falls in a one-second game of the example event (``confirm_time_verdicts``): the time forfeit
    waits as a case. Wang (an arbiter) may not overrule it (22.1); Chen (deputy chief) overrules it with a minute
    added: play resumes with Black's clock running from 1:00, and the answer says so in both languages."""
    arbiters(settings)
    start = now_ms() - 3_000
    one_second = {"initial_s": 1, "increment_s": 0}
    data = {"black": {"id": "youth-m-p1"}, "white": {"id": "youth-m-p3"}, "rule": "renju", "opening": "five-move-two",
            "time_control": one_second, "start_at": iso(start)}  # fmt: skip
    status, created = await platform.send("game.created", "youth-m-r1-b1", data, at=start - 60_000)
    assert status == 200, created
    for player in ("youth-m-p1", "youth-m-p3"):
        await platform.send("player.joined", "youth-m-r1-b1", {"player": player}, at=start - 30_000)
    case = await pending_case(platform)
    assert (case["verdict"]["termination"], case["verdict"]["winner"]) == ("time-forfeit", "white"), case
    status, answer = await act(platform, case["id"], {"action": "overrule", "add_ms": 60_000}, WANG)
    assert (status, answer["article"]) == (403, "22.1"), answer
    status, answer = await act(platform, case["id"], {"action": "overrule", "add_ms": 60_000, "reason": "lag"}, CHEN)
    assert status == 201, answer
    assert (answer["action"], answer["status"], answer["game"]) == ("overrule", "overruled", int(created["game"]))
    assert answer["said"] == {
        "zh": "裁决被推翻：超时，白方胜；对局继续；黑方（Male Youth Player 1）：时钟 0:00 → 1:00（增加 1 分 0 秒）",
        "en": "verdict overruled: time forfeit, White wins; play on; "
        "Black (Male Youth Player 1): clock 0:00 → 1:00 (1 min 0 s added)",
    }, answer["said"]
    view = await get(platform, "/api/v1/platforms/tourney/games/youth-m-r1-b1")
    assert (view["status"], view["result"], view["pending_verdict"]) == ("live", None, None), view
    assert view["running"] == ["youth-m-p1"]  # Black's clock runs again, from the minute given
    assert 50_000 < view["clocks"]["youth-m-p1"]["remaining_ms"] <= 60_000, view["clocks"]
    assert (await get(platform, f"/api/v1/cases/{case['id']}"))["status"] == "overruled"


async def test_paging_drops_no_case(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    base = now_ms()
    for n in range(25):
        await finding(platform, game, None, base + n, kind=f"kind-{n:02d}")
    dismiss = {"action": "dismiss", "reason": "noise"}
    (oldest,) = (await get(platform, "/api/v1/cases?kind=kind-00"))["cases"]
    assert (await act(platform, oldest["id"], dismiss))[0] == 201
    seen: list[int] = []
    cursor = ""
    for expected in (10, 10, 5):
        page = await get(platform, f"/api/v1/cases?limit=10{cursor}")
        assert page["total"] == 25 and len(page["cases"]) == expected
        assert page["remaining"] == 25 - len(seen) - expected
        seen += [c["id"] for c in page["cases"]]
        cursor = f"&cursor={page['next']}" if page["next"] else ""
    assert page["next"] is None and len(set(seen)) == 25
    kinds = [c["kind"] for c in (await get(platform, "/api/v1/cases?limit=500"))["cases"]]
    assert kinds == [f"kind-{n:02d}" for n in range(24, 0, -1)] + ["kind-00"]  # newest first; closed last
    for bad in ("limit=0", "limit=501", "status=lost", "cursor=x", "board=-1", "section=nowhere"):
        response = await platform.client.get(f"/api/v1/cases?{bad}", headers=CHIEF)
        assert response.status == 400, bad
    assert (await platform.client.get("/api/v1/cases")).status == 401
    assert (await platform.client.get("/api/v1/cases/99999", headers=CHIEF)).status == 404


async def test_audit_verify_detects_an_edited_case_action(platform: Platformer, settings: Settings) -> None:
    arbiters(settings)
    engine = create_database_engine(settings)
    with engine.begin() as connection:  # the test's arbiters, in the account changes as `proctor arbiter add` does
        for name in ("Wang-arbiter", "Zhao-arbiter", "Li-chief", "Chen-deputy-chief"):
            record_account(connection, name, "test", "added", 0)
    engine.dispose()
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    await finding(platform, game, "youth-m-p1", now_ms())
    await finding(platform, game, "youth-m-p1", now_ms())
    (case,) = (await get(platform, "/api/v1/cases"))["cases"]
    assert (await act(platform, case["id"], {"action": "dismiss", "reason": "a poster"}))[0] == 201
    report = await get(platform, "/api/v1/audit/verify")
    assert report["ok"], report["problems"]
    (action,) = (await get(platform, f"/api/v1/cases/{case['id']}"))["actions"]
    with engine.begin() as connection:
        connection.execute(text("UPDATE case_action SET action = 'confirm' WHERE id = :id"), {"id": action["id"]})
        connection.execute(text("DELETE FROM case_occurrence WHERE id = (SELECT MAX(id) FROM case_occurrence)"))
    engine.dispose()
    report = await get(platform, "/api/v1/audit/verify")
    assert not report["ok"]
    assert any(p.startswith(f"case_action {action['id']}: changed after it was written") for p in report["problems"])
    assert any(p.startswith("case_occurrence ") and ": deleted" in p for p in report["problems"])
    assert "1 case occurrences are stored but 2 are in the audit log" in report["problems"]


async def test_cases_survive_a_restart(platform: Platformer, settings: Settings, aiohttp_client: Any) -> None:
    arbiters(settings)
    game = await started(platform, "youth-m-r1-b1", "youth-m-p1", "youth-m-p3")
    one = await finding(platform, game, "youth-m-p1", now_ms() - 10_000, kind="left-area")
    await ended(platform, one, 50)
    await platform.client.close()
    from proctor.app import create_app  # noqa: PLC0415

    again = Platformer(await aiohttp_client(create_app(settings)), platform.name, platform.secret)
    two = await finding(again, game, "youth-m-p1", now_ms(), kind="left-area")
    await ended(again, two, 20)  # 70 s: the head came back with its 50 s
    (case,) = (await get(again, "/api/v1/cases"))["cases"]
    assert (case["occurrence_count"], case["duration_ms"]) == (2, 70_000)
    assert case["alert"]["reason"] == "total duration over 1 min"
