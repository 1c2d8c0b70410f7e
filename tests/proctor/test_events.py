"""Events set up from one TOML file: checked field by field, stored, exported, and linked to platform games."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, export_event, load_event_file, parse_event
from proctor.models import Game, Pairing, Player, Section
from proctor.settings import Settings
from proctor.time_zones import event_zone, local_time, zone_label
from tests.conftest import DATA
from tests.proctor.conftest import T0, Platformer
from tests.proctor.test_arbiters import add_arbiter, bearer

EXAMPLE = Path(__file__).parents[2] / "examples" / "national-youth-2021.toml"
DOCS = Path(__file__).parents[2] / "docs" / "events.md"


def engine_for(url: str) -> Any:
    engine = create_database_engine(Settings(database_url=url))
    migrate(engine)
    return engine


def test_the_documented_example_is_the_example_file() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") in DOCS.read_text(encoding="utf-8")


def test_the_national_championship_example_loads_and_exports_back(database_url: str, tmp_path: Path) -> None:
    engine = engine_for(database_url)
    with engine.begin() as connection:
        spec = load_event_file(connection, EXAMPLE, now=0)
    assert [s.slug for s in spec.sections][:2] == ["youth-m", "youth-f"]
    assert all(s.opening == "five-move-two" for s in spec.sections)
    with engine.connect() as connection:
        sections = connection.execute(select(Section)).all()
        assert len(sections) == 6 and sections[2].time_control == "youth-shared-60"
        assert sections[0].policy["reconnect_window_s"] == 180 and sections[0].policy["penalties"]["36.4.3"] == "loss"
        assert len(connection.execute(select(Player)).all()) == 24
        exported = export_event(connection, "national-youth-2021")
    again = parse_event(exported, tmp_path)
    assert [(s.slug, len(s.players), len(s.pairings)) for s in again.sections] == [
        (s.slug, len(s.players), len(s.pairings)) for s in spec.sections
    ]
    with engine.begin() as connection, pytest.raises(Exception, match="already exists"):
        load_event_file(connection, EXAMPLE, now=0)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0, replace=True)
    engine.dispose()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('gender = "m"', 'gender = "x"'), r"sections\[0\].players\[0\].gender: expected text matching"),
        (('rule = "renju"', 'rule = "chess"'), r"sections\[0\].rule: unknown rule set 'chess'"),
        (('opening = "five-move-two"', 'opening = "swap3"'), r"sections\[0\].opening: unknown opening"),
        (('time_control = "youth-60"', 'time_control = "forever"'), r"sections\[0\].time_control: unknown time"),
        (('tiebreaks = "PTS,BH,BH/M1,WIN"', 'tiebreaks = "PTS,XX"'), r"sections\[0\].tiebreaks: unknown tie-break"),
        (('"36.2" = "ladder"', '"17.4" = "ladder"'), r"17.4 is set by the rules"),
        (('"36.2" = "ladder"', '"36.2" = "jail"'), r"penalties.36.2: expected one of"),
        (("camera_required = true", 'camera_required = "yes"'), r"policy.camera_required: expected true or false"),
        (('role = "chief"', 'role = "king"'), r"arbiters\[0\].role: expected one of"),
        (("white = 3", "white = 9"), r"pairings\[0\].white: no player with start number 9"),
        (("start_no = 2", "start_no = 1"), r"players\[1\].start_no: 1 is given twice"),
        (('slug = "youth-m"', 'slug = "youth-m"\ncolour = "red"'), r"sections\[0\]: unknown key\(s\) colour"),
        (('time_zone = "Asia/Shanghai"', 'time_zone = "Asia/Peking"'), r"event.time_zone: expected an IANA time zone"),
        (('time_zone = "Asia/Shanghai"', 'time_zone = "../../etc/passwd"'), r"event.time_zone: expected an IANA"),
        (('time_zone = "Asia/Shanghai"', "time_zone = 8"), r"event.time_zone: expected text"),
    ],
)
def test_bad_event_files_say_where_and_store_nothing(change: tuple[str, str], message: str, tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(change[0], change[1], 1)
    with pytest.raises(EventFileError, match=message):
        parse_event(text, tmp_path)


def test_the_time_zone_is_the_events_and_utc_by_default(database_url: str, tmp_path: Path) -> None:
    assert parse_event(EXAMPLE.read_text(encoding="utf-8"), tmp_path).time_zone == "Asia/Shanghai"
    bare = '[event]\nslug = "club"\nname = "Club"\n'
    assert parse_event(bare, tmp_path).time_zone == "UTC"
    engine = engine_for(database_url)
    with engine.begin() as connection:
        assert event_zone(connection) == "UTC"  # no event yet
        load_event_file(connection, EXAMPLE, now=0)
        assert event_zone(connection) == event_zone(connection, "national-youth-2021") == "Asia/Shanghai"
        assert 'time_zone = "Asia/Shanghai"' in export_event(connection, "national-youth-2021")
    engine.dispose()
    assert zone_label("Asia/Shanghai", 0) == "Asia/Shanghai (UTC+08:00)"
    assert zone_label("America/New_York", 1_750_000_000_000) == "America/New_York (UTC-04:00)"  # summer time
    assert local_time(0, "Asia/Shanghai") == "1970-01-01 08:00:00" and local_time(0, "UTC") == "1970-01-01 00:00:00"


def test_a_section_from_a_trf_file(tmp_path: Path) -> None:
    shutil.copy(DATA / "tiebreak" / "lichess-swiss-2021_03.trf", tmp_path / "open.trf")
    text = ('[event]\nslug = "club"\nname = "Club Open"\n\n[[sections]]\nslug = "open"\nname = "Open"\n'
            'rule = "freestyle"\ntime_control = "blitz-3+2"\nrounds = 9\ntrf = "open.trf"\n')  # fmt: skip
    spec = parse_event(text, tmp_path)
    (section,) = spec.sections
    assert len(section.players) == 9 and section.pairings
    assert all(p.result in ("1-0", "0-1", "½-½", "+/-", "-/+") for p in section.pairings)


@pytest.mark.asyncio
async def test_a_platform_game_is_linked_to_its_pairing_and_gets_the_section_policy(
    platform: Platformer, settings: Settings
) -> None:
    engine = engine_for(settings.database_url)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
    data = {"black": {"id": "youth-m-p1"}, "white": {"id": "youth-m-p3"}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    status, body = await platform.send("game.created", "youth-m-r1-b1", data, at=T0 - 60_000)
    assert (status, body["status"]) == (200, "created") and "incidents" not in body
    with engine.connect() as connection:
        game = connection.execute(select(Game).where(col(Game.external_id) == "youth-m-r1-b1")).one()
        pairing = connection.execute(select(Pairing).where(col(Pairing.id) == game.pairing_id)).one()
    assert (pairing.round_no, pairing.board) == (1, 1)
    assert game.settings["reconnect_window_ms"] == 180_000 and game.settings["confirm_time_verdicts"] is True
    assert game.settings["game"]["max_candidates"] is None
    swapped = {**data, "black": {"id": "youth-m-p2"}, "white": {"id": "youth-m-p4"}, "time_control": "blitz-3+2"}
    status, body = await platform.send("game.created", "youth-m-r1-b2", swapped, at=T0 - 60_000)
    assert status == 200 and len(body["incidents"]) == 2  # the wrong players, and the wrong time control
    incidents = await (
        await platform.client.get(
            f"/api/v1/incidents?game={body['game']}", headers=bearer(add_arbiter(settings, "Ev", "arbiter"))
        )
    ).json()
    assert {i["kind"] for i in incidents} == {"pairing-mismatch"}
    assert any("seats youth-m-p2 (Black) against youth-m-p4" in i["summary"] for i in incidents)
    engine.dispose()


@pytest.mark.asyncio
async def test_events_are_listed_with_sections_and_rounds(platform: Platformer, settings: Settings) -> None:
    engine = engine_for(settings.database_url)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
    engine.dispose()
    events = await (await platform.client.get("/api/v1/events")).json()
    (event,) = events
    assert event["slug"] == "national-youth-2021" and len(event["sections"]) == 6
    assert event["sections"][0]["rounds"] == [{"round": 1, "boards": 2}]
