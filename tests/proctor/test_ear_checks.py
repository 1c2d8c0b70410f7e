"""Scheduled ear checks (36.2, issue 11): a section's policy asks the service for an ear check at the start of each
game and some more an hour at random times; the service prompts them itself while the game is in play and the player
streams, records the others as skipped, and turns each recording into one ``ear-check`` incident with both stills and
both ear crops.  The schedule is checked with a seeded random source; the rest on the real app, with a real aiortc
peer streaming to it."""

from __future__ import annotations

import hashlib
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlmodel import col

from proctor.app import create_app
from proctor.audit import verify_audit
from proctor.camera import ear_view_problem
from proctor.context import CONTEXT
from proctor.database import create_database_engine, migrate
from proctor.ear_checks import (
    HOUR_MS,
    MAX_PER_HOUR,
    SPACING_MS,
    START_QUIET_MS,
    EarCheckPlan,
    EarCheckPolicy,
    EarCheckScheduler,
    Occasion,
    random_times,
)
from proctor.events import EventFileError, export_event, load_event_file, parse_event, store_event
from proctor.models import CameraAction, Section, Tournament
from proctor.settings import Settings
from proctor.wall_clock import now_ms
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_camera import ScriptedCamera, connect
from tests.proctor.test_camera_controls import (
    ARBITER,
    SwayingFace,
    add_arbiter,
    audit_entries,
    incidents,
    issue,
    open_page,
    wait_for,
)
from video.checks import Box
from video.devices import StreamKey
from video.ingest import CapturedFrame

EXAMPLE = Path(__file__).parents[2] / "examples" / "national-youth-2021.toml"

EVENT = """
[event]
slug = "ears-2026"
name = "Ear checks 2026"

[[sections]]
slug = "open"
name = "Open"
time_control = "rapid-15"

[sections.policy]
ear_check_at_start = true
ear_checks_per_hour = 2

[[sections.players]]
start_no = 1
name = "Black of game ec1"
platform_ref = "ec1-b"

[[sections.players]]
start_no = 2
name = "White of game ec1"
platform_ref = "ec1-w"

[[sections.players]]
start_no = 3
name = "Black of game ec2"
platform_ref = "ec2-b"

[[sections.players]]
start_no = 4
name = "White of game ec2"
platform_ref = "ec2-w"

[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
platform_game_id = "ec1"

[[sections]]
slug = "quiet"
name = "No scheduled checks"
time_control = "rapid-15"

[[sections.players]]
start_no = 1
name = "Black of game q1"
platform_ref = "q1-b"
"""


def load_event(settings: Settings, tmp_path: Path) -> None:
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        store_event(connection, parse_event(EVENT, tmp_path), now=0)
    engine.dispose()


def scheduler(platform: Platformer, seed: int = 11) -> EarCheckScheduler:
    """The app's scheduler, its background loop stopped, with a seeded random source: the test ticks it itself."""
    camera = app_context(platform).camera
    assert camera.ear_check_task is not None and camera.ear_checks is not None
    camera.ear_check_task.cancel()
    camera.ear_checks.rng = random.Random(seed)
    camera.ear_checks.seconds = 5
    result: EarCheckScheduler = camera.ear_checks
    return result


async def started(platform: Platformer, game: str, start: int) -> int:
    """Create the game (both players present, before the start, or they would not have arrived in time: 14.3) and
    wait until the service's timer has started it; ``start`` is a little ahead."""
    status, body = await platform.create(game, start=start)
    assert status == 200, body
    for side in "bw":
        await platform.send("player.joined", game, {"player": f"{game}-{side}"}, at=start - 10_000)
    service = app_context(platform).service

    async def running() -> bool:
        return bool(service.games[body["game"]].state.started)

    await wait_for(running, 5.0)
    return int(body["game"])


def camera_rows(settings: Settings, kind: str) -> list[Any]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        rows = connection.execute(
            select(CameraAction).where(col(CameraAction.kind) == kind).order_by(col(CameraAction.id))
        ).all()
    engine.dispose()
    return list(rows)


# --- The policy keys ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("ear_checks_per_hour = 2", "ear_checks_per_hour = -1"),
         r"sections\[0\]\.policy\.ear_checks_per_hour: expected a whole number from 0 to 6"),
        (("ear_checks_per_hour = 2", "ear_checks_per_hour = 7"),
         r"ear_checks_per_hour: expected a whole number from 0 to 6 \(36\.2: scheduled ear checks are at least 5 min"),
        (("ear_checks_per_hour = 2", "ear_checks_per_hour = 1.5"), r"ear_checks_per_hour: expected a whole number"),
        (("ear_checks_per_hour = 2", 'ear_checks_per_hour = "2"'), r"from 0 to 6 \(.*\), got '2'"),
        (("ear_checks_per_hour = 2", "ear_checks_per_hour = true"), r"from 0 to 6 \(.*\), got True"),
        (("ear_check_at_start = true", 'ear_check_at_start = "yes"'),
         r"sections\[0\]\.policy\.ear_check_at_start: expected true or false"),
        (("ear_check_at_start = true", "ear_check_every_game = true"),
         r"sections\[0\]\.policy: unknown key\(s\) ear_check_every_game"),
        (("ear_checks_per_hour = 2", 'ear_checks_per_hour = 2\nchecks = ["camera"]'),
         r'sections\[0\]\.policy: the scheduled ear checks \(.*36\.2\) need "earphones" in checks'),
    ],
)  # fmt: skip
def test_bad_ear_check_keys_say_where_and_store_nothing(
    change: tuple[str, str], message: str, tmp_path: Path, database_url: str
) -> None:
    text = EVENT.replace(change[0], change[1], 1)
    with pytest.raises(EventFileError, match=message):
        parse_event(text, tmp_path)
    (tmp_path / "event.toml").write_text(text, encoding="utf-8")
    engine = create_database_engine(Settings(database_url=database_url))
    migrate(engine)
    with pytest.raises(EventFileError), engine.begin() as connection:
        load_event_file(connection, tmp_path / "event.toml", now=0)
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(Tournament)).scalar_one() == 0
    engine.dispose()


def test_the_ear_check_keys_are_stored_and_exported(tmp_path: Path, database_url: str) -> None:
    engine = create_database_engine(Settings(database_url=database_url))
    migrate(engine)
    with engine.begin() as connection:
        store_event(connection, parse_event(EVENT, tmp_path), now=0)
    with engine.connect() as connection:
        policies: dict[str, Any] = dict(connection.execute(select(col(Section.slug), col(Section.policy))).all())
        exported = export_event(connection, "ears-2026")
    engine.dispose()
    assert EarCheckPolicy.of(policies["open"]) == EarCheckPolicy(at_start=True, per_hour=2)
    assert EarCheckPolicy.of(policies["quiet"]) == EarCheckPolicy() and not EarCheckPolicy().active
    again = parse_event(exported, tmp_path).sections[0].policy
    assert (again.ear_check_at_start, again.ear_checks_per_hour) == (True, 2)
    example = parse_event(EXAMPLE.read_text(encoding="utf-8"), tmp_path).sections[0].policy
    assert (example.ear_check_at_start, example.ear_checks_per_hour) == (True, 2)


# --- The schedule ------------------------------------------------------------------------------------------------


def checks_over(plan: EarCheckPlan, since: int, until: int, step_ms: int = 1000) -> list[tuple[int, Occasion]]:
    """The checks the plan makes when ticked every ``step_ms`` (as the service does; each made at once)."""
    made = []
    for now in range(since, until, step_ms):
        check = plan.due(now)
        if check is not None:
            made.append((check.due_ms, check.occasion))
            plan.done(now)
    return made


def test_the_schedule_has_the_start_check_then_n_an_hour_spaced_and_seeded() -> None:
    start = 1_800_000_000_000
    policy = EarCheckPolicy(at_start=True, per_hour=2)
    plan = EarCheckPlan.make(1, "p", start, policy, random.Random(5), now=start, last_check_ms=None)
    made = checks_over(plan, start, start + 3 * HOUR_MS)
    assert made[0] == (start, Occasion.START)
    times = [at for at, occasion in made[1:] if occasion is Occasion.RANDOM]
    assert len(made) == 1 + len(times) and len(times) == 6  # 2 in each of the 3 hours
    assert [sum(start + h * HOUR_MS <= at < start + (h + 1) * HOUR_MS for at in times) for h in range(3)] == [2, 2, 2]
    assert times[0] >= start + START_QUIET_MS
    assert min(b - a for a, b in zip([start, *times], times, strict=False)) >= SPACING_MS
    again = EarCheckPlan.make(1, "p", start, policy, random.Random(5), now=start, last_check_ms=None)
    assert checks_over(again, start, start + 3 * HOUR_MS) == made  # the same seed, the same times
    other = EarCheckPlan.make(1, "p", start, policy, random.Random(6), now=start, last_check_ms=None)
    assert checks_over(other, start, start + 3 * HOUR_MS) != made
    none = EarCheckPlan.make(1, "p", start, EarCheckPolicy(at_start=False, per_hour=0), random.Random(5), start, None)
    assert checks_over(none, start, start + HOUR_MS) == []


def test_random_times_are_uniform_apart_and_never_too_many() -> None:
    rng = random.Random(1)
    start = 0
    spread = []
    for _ in range(500):
        for hour in (0, 1):
            times = random_times(start, hour, MAX_PER_HOUR, rng)
            assert len(times) == MAX_PER_HOUR and times == sorted(times)
            assert all(b - a >= SPACING_MS for a, b in itertools.pairwise(times))
            low = hour * HOUR_MS + (START_QUIET_MS if hour == 0 else 0)
            assert low <= times[0] and times[-1] <= (hour + 1) * HOUR_MS - SPACING_MS
        spread += random_times(start, 1, 1, rng)
    quarters = [sum(HOUR_MS + q * 825_000 <= at < HOUR_MS + (q + 1) * 825_000 for at in spread) for q in range(4)]
    assert min(quarters) > 80  # one an hour falls anywhere in it (500 draws: ~125 a quarter)
    with pytest.raises(ValueError, match="cannot be 5 minutes apart"):
        random_times(start, 0, 12, rng)


def test_a_restart_plans_from_now_without_a_burst_of_missed_checks() -> None:
    start = 1_800_000_000_000
    policy = EarCheckPolicy(at_start=True, per_hour=2)
    full = checks_over(EarCheckPlan.make(1, "p", start, policy, random.Random(5), start, None), start, start + HOUR_MS)
    later = start + 50 * 60_000  # the service was down from the start until 50 minutes into the game
    plan = EarCheckPlan.make(1, "p", start, policy, random.Random(5), now=later, last_check_ms=None)
    assert plan.due(later) is None  # neither the start check nor the random ones that passed
    assert checks_over(plan, later, start + HOUR_MS) == [c for c in full if c[0] >= later]
    # Restarted 2 minutes in, after the start check was made (or skipped): not again.
    plan = EarCheckPlan.make(1, "p", start, policy, random.Random(5), now=start + 120_000, last_check_ms=start + 1000)
    assert plan.due(start + 120_000) is None
    first = checks_over(plan, start + 120_000, start + HOUR_MS)
    assert first and first[0][0] >= start + 1000 + SPACING_MS
    # The service restarted 4 minutes in, before it made the start check: it makes it now, late.
    plan = EarCheckPlan.make(1, "p", start, policy, random.Random(5), now=start + 240_000, last_check_ms=None)
    late = plan.due(start + 240_000)
    assert late is not None and late.occasion is Occasion.START
    # A clock that jumps over several times makes one check, not a burst.
    plan = EarCheckPlan.make(1, "p", start, EarCheckPolicy(per_hour=6), random.Random(5), start, None)
    jumped = plan.due(start + 2 * HOUR_MS)
    assert jumped is not None and jumped.occasion is Occasion.RANDOM
    plan.done(start + 2 * HOUR_MS)
    assert plan.due(start + 2 * HOUR_MS + 1000) is None
    # An arbiter's ear check keeps the next scheduled one 5 minutes away.
    plan = EarCheckPlan.make(1, "p", start, EarCheckPolicy(per_hour=2), random.Random(5), start, None)
    (due, _), *_ = checks_over(EarCheckPlan.make(1, "p", start, EarCheckPolicy(per_hour=2), random.Random(5), start,
                                                 None), start, start + HOUR_MS)  # fmt: skip
    plan.checked(due - 60_000)
    assert all(at >= due - 60_000 + SPACING_MS for at, _ in checks_over(plan, start, start + HOUR_MS))


# --- On the app --------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_scheduled_check_without_a_stream_is_skipped_with_why_also_after_a_restart(
    platform: Platformer, settings: Settings, tmp_path: Path, aiohttp_client: Any
) -> None:
    load_event(settings, tmp_path)
    add_arbiter(settings)
    ticker = scheduler(platform)
    await issue(platform, "ec1-b")  # a link, never opened; ec1-w has none
    start = now_ms() + 1500
    game = await started(platform, "ec1", start)
    await started(platform, "q1", start)  # its section asks for no scheduled checks
    before = len(await incidents(platform))
    outcomes = await ticker.tick(start + 2000)
    assert sorted((o["player"], o["occasion"], o["skipped"]) for o in outcomes) == [
        ("ec1-b", "start", "no live camera stream"),
        ("ec1-w", "start", "no live camera stream: no stream link was issued"),
    ]
    assert await ticker.tick(start + 3000) == []  # recorded once
    skips = camera_rows(settings, "skip")
    assert sorted((r.player_ref, r.arbiter, r.role, r.detail["game"], r.detail["article"]) for r in skips) == [
        ("ec1-b", "service", "service", game, "36.2"), ("ec1-w", "service", "service", game, "36.2")]  # fmt: skip
    audited = [(actor, detail) for actor, action, detail in audit_entries(settings) if action == "camera.skip"]
    assert [actor for actor, _ in audited] == ["service", "service"]
    assert {d["reason"] for _, d in audited} == {"no live camera stream", "no live camera stream: no stream link was "
                                                 "issued"}  # fmt: skip
    assert len(await incidents(platform)) == before  # nothing for the arbiters to judge
    status = await (await platform.client.get("/api/v1/players/ec1-b/camera", headers=ARBITER)).json()
    (skipped,) = status["skipped_checks"]
    assert (skipped["kind"], skipped["article"], skipped["scheduled"], skipped["reason"]) == (
        "ear-check", "36.2", "start", "no live camera stream")  # fmt: skip
    assert status["policy"]["ear_checks"] == {"at_start": True, "per_hour": 2, "article": "36.2"}
    # Paused by the arbiter: the game is not in play, a random check that comes due is skipped with why.
    plan = ticker.plans[(game, "ec1-b")]
    assert plan is not None and plan.upcoming()
    response = await platform.client.post(f"/api/v1/games/{game}/actions", headers=ARBITER,
                                          json={"action": "pause", "reason": "a question"})  # fmt: skip
    assert response.status in (200, 201), await response.text()
    due = plan.upcoming()[0]
    outcomes = await ticker.tick(due + 1)
    assert {(o["player"], o["skipped"]) for o in outcomes} >= {("ec1-b", "the game is paused")}
    # A restart 2 minutes in: planned again from what is stored, the start check is not made again.
    await platform.client.close()
    restarted = await aiohttp_client(create_app(settings))
    assert restarted.app is not None
    camera = restarted.app[CONTEXT].camera
    camera.ear_check_task.cancel()
    again = camera.ear_checks
    assert await again.tick(start + 120_000) == []
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        assert verify_audit(connection).ok
    engine.dispose()


@pytest.mark.asyncio
async def test_a_scheduled_ear_check_becomes_one_incident_with_both_stills_and_ear_crops(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    """The service's own loop: the game starts while the player streams, and the start check is prompted."""
    load_event(settings, tmp_path)
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    assert context.camera.ear_checks is not None
    context.camera.ear_checks.seconds = 5
    token = await issue(platform, "ec1-b")
    page, _ = await open_page(platform, token)
    pc = await connect(platform, token, SwayingFace())
    try:
        await wait_for(lambda: _analysed(context, "ec1-b", 2))
        game = await started(platform, "ec1", now_ms() + 1500)
        kind, shown = await page.next(10.0)
        assert kind == "prompt" and (shown["kind"], shown["article"]) == ("ear-check", "36.2")
        assert "both ears can be seen" in shown["instruction"] and shown["remaining_ms"] == 5000

        async def raised() -> bool:
            return any(i["kind"] == "ear-check" for i in await incidents(platform))

        await wait_for(raised, 20.0)
    finally:
        await pc.close()
    (item,) = [i for i in await incidents(platform) if i["kind"] == "ear-check"]
    assert (item["article"], item["source"], item["player"], item["game"]) == ("36.2", "service", "ec1-b", game)
    assert [a["action"] for a in item["actions"]] == []  # one item: everything is in it
    evidence = item["evidence"]
    landmarks = context.camera.checks_note.startswith("faces: CenterFace")
    names = evidence["media"]
    assert len(names) == (5 if landmarks else 3) and names[-1].endswith(".webm") and evidence["scheduled"] == "start"
    assert [n.rsplit("-", 1)[0].split("ear-check-")[1] for n in names[:-1]] == (
        ["left", "left-ear", "right", "right-ear"] if landmarks else ["left", "right"])  # fmt: skip
    for name, digest in zip(names, evidence["sha256"], strict=True):
        assert hashlib.sha256((tmp_path / "media" / name).read_bytes()).hexdigest() == digest
    if landmarks:
        assert "judge both ears" in item["summary"] and "an ear crop from each" in item["summary"]
    assert item["summary"].startswith("Ear check (36.2), at the start of the game: ")
    raised_audit = [(actor, detail) for actor, action, detail in audit_entries(settings) if action == "incident.raised"]
    assert ("service", {"kind": "ear-check", "game": game, "article": "36.2",
                        "media_sha256": evidence["sha256"]}) in raised_audit  # fmt: skip
    prompts = [(actor, detail) for actor, action, detail in audit_entries(settings) if action == "camera.prompt"]
    assert [(actor, d["prompt"], d["scheduled"]) for actor, d in prompts] == [("service", "ear-check", "start")]
    status = await (await platform.client.get("/api/v1/players/ec1-b/camera", headers=ARBITER)).json()
    (prompt,) = status["prompts"]
    assert (prompt["by"], prompt["scheduled"], prompt["incident"]) == ("service", "start", item["id"])
    assert prompt["recorded"]["ear_view"] == "usable" or not landmarks
    # The arbiter judges it: earphones seen, the usual penalty path of 36.2.
    response = await platform.client.post(f"/api/v1/incidents/{item['id']}/actions", headers=ARBITER,
                                          json={"action": "penalty", "offence": "36.2",
                                                "note": "an earbud in the left ear"})  # fmt: skip
    assert response.status in (200, 201), await response.text()
    verdict = (await response.json())["verdict"]
    assert verdict["player"] == "ec1-b" and "36.2" in verdict["articles"]
    history = await (await platform.client.get("/api/v1/players/ec1-b/history", headers=ARBITER)).json()
    (penalty,) = history["penalties"]
    assert penalty["evidence"] == [f"incident:{item['id']}", *names]  # the stills and crops go with the penalty


def frame(turn: float | None, centre: int = 320, still: bytes | None = b"jpeg") -> CapturedFrame:
    """An analysed frame with one 60-pixel face, its nose ``turn`` eye distances off the eyes' middle (None: a
    detector without landmarks)."""
    x, y = centre - 30, 200
    marks = () if turn is None else ((x + 20, y + 25), (x + 40, y + 25), (int(x + 30 + 20 * turn), y + 40))
    return CapturedFrame(0.0, b"small", still, (Box(x, y, 60, 60, marks),))


def test_an_ear_view_needs_the_head_turned_to_both_sides() -> None:
    assert ear_view_problem([frame(-0.5), frame(0.0), frame(0.5)], 15) is None
    assert ear_view_problem([frame(-0.5), frame(-0.3), frame(-0.2)], 15) == "the head was not turned to both sides"
    assert ear_view_problem([frame(0.0), frame(0.0)], 15) == "the head was not turned to both sides"
    assert ear_view_problem([frame(None, 200), frame(None, 320), frame(None, 440)], 15) is None  # the face moved
    assert ear_view_problem([frame(None, 320), frame(None, 325)], 15) == "the head did not move to both sides"
    assert ear_view_problem([], 15) == "no picture arrived in the 15 s window"
    assert ear_view_problem([CapturedFrame(0.0, b"small", b"jpeg", ())] * 3, 15) == "no face was found in the window"
    assert ear_view_problem([frame(-0.5, still=None), frame(0.5)], 15) == "no still was kept"


@pytest.mark.asyncio
async def test_no_usable_ear_view_says_ask_again(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    """Nobody in front of the camera, in a scheduled check and in an arbiter's prompt."""
    load_event(settings, tmp_path)
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    ticker = scheduler(platform)
    # (A face that only looks ahead is not told apart reliably in these synthetic pictures: the test above.)
    streams = [await connect(platform, await issue(platform, player), ScriptedCamera([(60, 0)]))
               for player in ("ec1-b", "ec2-b")]  # fmt: skip
    try:
        await wait_for(lambda: _analysed(context, "ec1-b", 2))
        await wait_for(lambda: _analysed(context, "ec2-b", 2))
        start = now_ms() + 1500
        game = await started(platform, "ec1", start)
        await started(platform, "ec2", start)
        asked = await platform.client.post("/api/v1/players/ec2-b/camera/prompts", headers=ARBITER,
                                           json={"kind": "ear-check", "seconds": 5})  # fmt: skip
        assert asked.status == 201
        theirs = (await asked.json())["incident"]
        outcomes = await ticker.tick(now_ms())
        assert {(o["player"], "prompt" in o) for o in outcomes} >= {("ec1-b", True)}
        assert "ec2-b" not in {o["player"] for o in outcomes}  # the arbiter's check since the start counts

        async def recorded() -> bool:
            items = await incidents(platform)
            notes = [a["note"] for i in items if i["id"] == theirs for a in i["actions"] if a["action"] == "note"]
            return any(i["kind"] == "ear-check" and i["source"] == "service" for i in items) and len(notes) >= 1

        await wait_for(recorded, 20.0)
    finally:
        for pc in streams:
            await pc.close()
    items = await incidents(platform)
    (scheduled,) = [i for i in items if i["kind"] == "ear-check" and i["source"] == "service"]
    assert scheduled["game"] == game and scheduled["player"] == "ec1-b"
    assert scheduled["summary"] == ("Ear check (36.2), at the start of the game: no usable ear view: ask again (no "
                                    "face was found in the window)")  # fmt: skip
    assert scheduled["evidence"]["media"][-1].endswith(".webm") and scheduled["evidence"]["ear_view"] != "usable"
    (arbiters,) = [i for i in items if i["id"] == theirs]
    notes = [a["note"] for a in arbiters["actions"] if a["action"] == "note"]
    assert notes[-1] == "Ear check (36.2): no usable ear view: ask again (no face was found in the window)"


async def _analysed(context: Any, player: str, frames: int) -> bool:
    session = context.camera.ingest.sessions.get(StreamKey(player))
    return session is not None and session.frames_analysed >= frames
