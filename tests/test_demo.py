"""``proctor demo`` end to end: the example championships played through signed webhooks against the real service,
every section's standings checked through the API, the knockout finals drawn and played to their places; the demo's
own pairing step, its copy of the event, and its simulated cameras as the checks see them (36.4)."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
import tomllib
from collections.abc import AsyncIterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from proctor.cli import main as cli_main
from proctor.database import create_database_engine
from proctor.demo import DemoOptions, Outcome, Setup, play, running_service, set_up, start_cameras
from proctor.demo_event import DEMO_TIME_CONTROL, demo_copy
from proctor.demo_pairings import POINTS, Played, monrad_round, round_robin_round
from proctor.errors import ConflictError
from proctor.events import EventFileError
from proctor.round_pairings import Board, add_round
from proctor.settings import Settings
from proctor.simulate import ServiceClient, play_event

EXAMPLES = Path(__file__).parent.parent / "examples"
YOUTH_2021 = EXAMPLES / "national-youth-2021.toml"
NATIONAL_2023 = EXAMPLES / "national-2023.toml"

TIE_AT_THE_CUT = """
[event]
slug = "tie-at-the-cut"
name = "A tie at the cut"

[[sections]]
slug = "prelims"
name = "Preliminaries"
opening = "soosorv"
time_control = "30+10"
rounds = 1
tiebreaks = "PTS,BH"
play_off_ties = "qualification"
players = [
    { start_no = 1, name = "One", platform_ref = "p1" }, { start_no = 2, name = "Two", platform_ref = "p2" },
    { start_no = 3, name = "Three", platform_ref = "p3" }, { start_no = 4, name = "Four", platform_ref = "p4" },
]
pairings = [
    { round = 1, board = 1, black = 1, white = 2, result = "½-½" },
    { round = 1, board = 2, black = 3, white = 4, result = "½-½" },
]

[[sections]]
slug = "finals"
name = "Finals"
opening = "soosorv"
time_control = "30+10"
system = "knockout"
qualify_from = "prelims"
qualifiers = 2

[sections.policy]
adjudication = "claim"
"""


def settings_in(folder: Path) -> Settings:
    return Settings(database_url=f"sqlite:///{folder / 'demo.db'}", media_dir=str(folder / "media"), port=0)


class Demo:
    """The demo's service running on its demo copy, and an API client with the demo chief's token."""

    def __init__(self, settings: Settings, setup: Setup, base: str, session: aiohttp.ClientSession) -> None:
        self.settings, self.setup, self.base, self.session = settings, setup, base, session
        self.client = ServiceClient(session, base, setup.chief.token)

    async def play(self, through_end: bool = True) -> Outcome:
        outcome = Outcome()
        options = DemoOptions(through_end=through_end, headless=True, cameras=False, port=0)
        await play(self.session, self.base, self.settings, self.setup, options, outcome)
        return outcome

    async def get(self, path: str) -> Any:
        return await self.client.request("GET", f"/api/v1/events/{self.setup.spec.slug}{path}")


@pytest.fixture
async def demo_of(tmp_path: Path) -> AsyncIterator[Any]:
    """Start the demo's service on an event file's demo copy (one at a time)."""
    opened: list[Any] = []

    async def start(event_file: Path) -> Demo:
        settings = settings_in(tmp_path)
        setup = await asyncio.to_thread(set_up, settings, event_file)
        service = running_service(settings)
        base = await service.__aenter__()
        session = aiohttp.ClientSession()
        opened.append((service, session))
        return Demo(settings, setup, base, session)

    yield start
    for service, session in opened:
        await session.close()
        await service.__aexit__(None, None, None)


def points(text: str) -> Fraction:
    return Fraction(text)


async def test_the_2023_championships_are_played_to_the_end_through_signed_webhooks(demo_of: Any) -> None:
    """Regulations 2023 VII(2)-(4): Swiss preliminaries (rounds 2-7 paired by the demo's step), round robins of
    two-game matches, and the knockout finals drawn from the preliminaries' top 8 and played to their places."""
    started = time.monotonic()
    demo = await demo_of(NATIONAL_2023)
    outcome = await demo.play()
    assert outcome.problems == [] and outcome.report.disagreed == []
    assert outcome.report.deliveries.statuses.get("gave up", 0) == 0
    assert {"forbidden", "disconnect", "late", "draw-accepted", "draw-declined", "resign"} <= set(outcome.report.twists)
    for section in demo.setup.spec.sections:
        standings = await demo.get(f"/sections/{section.slug}/standings")
        if section.system == "knockout":
            bracket = await demo.get(f"/sections/{section.slug}/bracket")
            assert bracket["finished"] and bracket["champion"], section.slug
            assert len(bracket["places"]) == 8 and [row["place"] for row in standings["rows"]][:2] == [1, 2]
            continue
        assert standings["complete"] == section.rounds, section.slug
        assert sorted(row["start_no"] for row in standings["rows"]) == [p.start_no for p in section.players]
        games = [p for p in standings["pairings"] if p["white"] is not None]
        assert all(p["result"] and p["linked"] for p in games), section.slug
        assert len(games) == section.rounds * len(section.players) // 2 * section.games_per_match
        # 28.1: every game gives out one point (no double loss and no bye here).
        assert sum(points(row["points"]) for row in standings["rows"]) == len(games)
    print(f"2023 played through in {time.monotonic() - started:.1f} s")


async def test_a_tie_at_the_cut_is_played_off_before_the_bracket_is_drawn(demo_of: Any, tmp_path: Path) -> None:
    """Regulations 2023 VII(4)3: the four players level after every tie-break across the cut to a 2-player final
    play off (games of no pairing), and the chief's seeds follow the play-off; the final plays forbidden moves by
    claim (19.1.2), the play-off as the preliminaries, automatically (35.1)."""
    event = tmp_path / "tie.toml"
    event.write_text(TIE_AT_THE_CUT, encoding="utf-8")
    demo = await demo_of(event)
    outcome = await demo.play()
    assert outcome.problems == [] and outcome.report.disagreed == []
    play_offs = [game for game in outcome.report.results if "-playoff-" in game]
    assert len(play_offs) >= 6  # at least three matches of two games each
    bracket = await demo.get("/sections/finals/bracket")
    assert bracket["finished"] and len(bracket["places"]) == 2
    assert bracket["drawn_by"] == "Demo Chief"


def test_the_demo_command_plays_the_2021_example_headless_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """The CI mode: `proctor demo --through-end --headless`: 6 sections of 7 Swiss rounds, the standings checked."""
    status = cli_main(["demo", "--event", str(YOUTH_2021), "--through-end", "--headless", "--no-cameras",
                       "--port", "0"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert "84 game(s)" in out and "results: 84 agree with the engine, 0 differ" in out
    assert out.count("after round 7") == 6
    assert "Demo Chief" in out and "/arbiter" in out


async def test_simulate_plays_a_round_of_an_events_pairings(demo_of: Any) -> None:
    """`proctor simulate --event`: the pairings read through the API, each game linked to its pairing."""
    demo = await demo_of(YOUTH_2021)
    slug = demo.setup.spec.slug
    report = await play_event(demo.base, "demo", demo.setup.secret, demo.setup.chief.token, f"{slug}/youth-f", None,
                              seed=3, real_time=False, late_s=5)  # fmt: skip
    assert report.games == 2 and report.disagreed == []
    standings = await demo.get("/sections/youth-f/standings")
    assert standings["complete"] == 1
    assert [p["source"] for p in standings["pairings"] if p["round"] == 1] == ["game", "game"]


def test_the_demo_copy_is_labelled_short_and_apart_from_the_real_event() -> None:
    raw = tomllib.loads(YOUTH_2021.read_text(encoding="utf-8"))
    copy = demo_copy(raw, "-demo-2", dt.date(2026, 12, 6))
    head = copy["event"]
    assert head["slug"] == "national-youth-2021-demo-2" and "演示" in head["name"] and "demo" in head["name"]
    days = dt.date.fromisoformat(raw["event"]["ends"]) - dt.date.fromisoformat(raw["event"]["starts"])
    assert (head["starts"], head["ends"]) == ("2026-12-06", (dt.date(2026, 12, 6) + days).isoformat())
    section = copy["sections"][0]
    assert section["time_control"] == DEMO_TIME_CONTROL and section["policy"]["lateness_tolerance_s"] >= 6
    assert section["players"][0]["platform_ref"] == "youth-m-p1-demo-2"
    assert section["pairings"][0]["platform_game_id"] == "youth-m-r1-b1-demo-2"
    assert raw["sections"][0]["time_control"] == "youth-60"  # the file's own table is left as it was


def test_the_demos_pairing_step_avoids_rematches_and_balances_colours() -> None:
    """Not FIDE's Dutch system: the demo's Monrad-style step (proctor.demo_pairings)."""
    history = [Played(1, 1, 4, "1-0"), Played(1, 5, 2, "1-0"), Played(1, 3, 6, "½-½")]
    # By score, then start number: 1, 5 (1 point), 3, 6 (½), 2, 4; 3 and 6 have met, so 3 meets 2 and 6 meets 4.
    # Colours: 2 and 4 played second in round 1, so they play first now; 1 and 5 both played first: the higher-ranked.
    assert monrad_round(range(1, 7), history) == [Board(1, 1, 5), Board(2, 2, 3), Board(3, 6, 4)]
    # Five players: the bye goes to the lowest-ranked who has not had one (5 had it in round 1).
    odd = [Played(1, 1, 2, "1-0"), Played(1, 3, 4, "0-1"), Played(1, 5, None, "bye")]
    assert monrad_round(range(1, 6), odd) == [Board(1, 4, 1), Board(2, 2, 5), Board(3, 3, None)]
    # Four players, fourth round: every pairing is a rematch, and one is allowed.
    everyone = [Played(r, a, b, "1-0") for r, (a, b) in enumerate([(1, 2), (3, 4), (1, 3), (2, 4), (1, 4), (2, 3)])]
    assert len(monrad_round(range(1, 5), everyone)) == 2
    assert POINTS["½-½"] == (Fraction(1, 2), Fraction(1, 2))
    assert round_robin_round([11, 12, 13, 14], 1) == [Board(1, 11, 14), Board(2, 12, 13)]


def test_a_round_is_added_only_as_the_sections_next_round_and_checked_as_the_file_is(tmp_path: Path) -> None:
    """27.3: a Swiss is paired round by round; proctor.round_pairings stores a round as the event file's pairings
    are checked (each player once a round), and only the round after the last one paired."""
    settings = settings_in(tmp_path)
    slug = set_up(settings, NATIONAL_2023).spec.slug
    engine = create_database_engine(settings)
    refused = [
        ("men", 3, [Board(1, 1, 2)], ConflictError, "the next round to pair is 2"),
        ("men", 2, [Board(1, 1, 2), Board(2, 3, 1)], EventFileError, "already plays on board 1"),
        ("men", 2, [Board(1, 1, 13)], EventFileError, "no player with start number 13"),
        ("men-open", 10, [Board(1, 1, 2)], ConflictError, "of 9"),  # its file lists all 9 rounds
        ("men-finals", 1, [Board(1, 1, 2)], ConflictError, "bracket"),
    ]
    try:
        for section, round_no, boards, error, message in refused:
            with engine.begin() as connection, pytest.raises(error, match=message):
                add_round(connection, slug, section, round_no, boards)
        with engine.begin() as connection:
            assert add_round(connection, slug, "men", 2, [Board(b, 2 * b - 1, 2 * b) for b in range(1, 7)]) == 6
    finally:
        engine.dispose()


async def test_the_simulated_cameras_show_a_player_leaving_a_second_person_and_a_frozen_picture(
    demo_of: Any,
) -> None:
    """36.4.1, 36.4.2, 36.4: the demo's cameras stream their scenes over WebRTC to the ingest, and the checks raise
    left-area, extra-person and camera-frozen within the scenes' first 25 seconds."""
    demo = await demo_of(YOUTH_2021)
    sections = [s for s in await demo.client.sections(demo.setup.spec.slug) if s.section in ("youth-m", "youth-f")]
    cameras = await start_cameras(demo.session, demo.client, demo.base, Settings(), sections)
    if cameras is None:  # the pictures come from the scikit-image wheel, fetched by hash from PyPI
        reason = "the cameras' pictures could not be fetched (no PyPI here)"
        if os.environ.get("CI"):  # CI reaches PyPI: there the test must run, never pass by skipping
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        wanted = {"left-area", "extra-person", "camera-frozen"}
        until = time.monotonic() + 40
        kinds: set[str] = set()
        while time.monotonic() < until and not wanted <= kinds:
            await asyncio.sleep(1)
            incidents = await demo.client.request("GET", "/api/v1/incidents")
            kinds = {incident["kind"] for incident in incidents}
        assert wanted <= kinds, kinds
        assert "virtual-background" not in kinds and "camera-lost" not in kinds
    finally:
        await cameras.close()
